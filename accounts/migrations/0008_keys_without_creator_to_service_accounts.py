"""Every key acts as someone: a key whose creator is unknown (made before keys recorded one)
moves to a service account of its organization, "Keys without a creator", with the member role,
which is how such keys were judged until now (the least role that may hold keys). Keys with a
creator stay personal keys of that person."""

from django.db import migrations

NAME = "Keys without a creator"


def forwards(apps, schema_editor):
    ApiKey = apps.get_model("accounts", "ApiKey")
    ServiceAccount = apps.get_model("accounts", "ServiceAccount")
    orphaned = ApiKey.objects.filter(created_by__isnull=True, service_account__isnull=True)
    for organization_id in orphaned.values_list("organization_id", flat=True).distinct():
        account, _ = ServiceAccount.objects.get_or_create(
            organization_id=organization_id, name=NAME, defaults={"role": "member"}
        )
        orphaned.filter(organization_id=organization_id).update(service_account=account)


def backwards(apps, schema_editor):
    ApiKey = apps.get_model("accounts", "ApiKey")
    ApiKey.objects.filter(service_account__name=NAME).update(service_account=None)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0007_service_accounts")]

    operations = [migrations.RunPython(forwards, backwards)]
