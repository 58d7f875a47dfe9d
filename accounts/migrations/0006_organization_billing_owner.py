"""Organizations get a paying account (billing_owner): the person whose per-person shares the
organization counts against. Existing organizations: their longest-standing owner."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def set_billing_owners(apps, schema_editor):
    Organization = apps.get_model("accounts", "Organization")
    Membership = apps.get_model("accounts", "Membership")
    for org in Organization.objects.filter(billing_owner__isnull=True).iterator():
        first = (
            Membership.objects.filter(organization=org, role="owner")
            .order_by("created_at", "id")
            .first()
        )
        if first is not None:
            Organization.objects.filter(pk=org.pk).update(billing_owner_id=first.user_id)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_governance_access_quotas"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="organization",
            name="billing_owner",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="billed_organizations",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.RunPython(set_billing_owners, migrations.RunPython.noop),
    ]
