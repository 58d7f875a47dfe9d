"""Users get an explicit personal organization (it used to be inferred as the oldest one they
belong to, which an invitation could change), and memberships a read-only viewer role."""

import django.db.models.deletion
from django.db import migrations, models


def set_personal_organizations(apps, schema_editor):
    """Today's answer for each user: the oldest organization they own, else the oldest they
    belong to (owning is preferred so that a user already pulled into someone else's older
    organization gets their own one back)."""
    User = apps.get_model("accounts", "User")
    Membership = apps.get_model("accounts", "Membership")
    for user in User.objects.filter(personal_org=None).iterator():
        mine = Membership.objects.filter(user=user).order_by(
            "organization__created_at", "organization_id"
        )
        chosen = mine.filter(role="owner").first() or mine.first()
        if chosen is not None:
            user.personal_org_id = chosen.organization_id
            user.save(update_fields=["personal_org"])


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0002_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='user',
            name='personal_org',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='accounts.organization', verbose_name='personal organization'),
        ),
        migrations.AlterField(
            model_name='membership',
            name='role',
            field=models.CharField(choices=[('owner', 'Owner'), ('admin', 'Admin'), ('member', 'Member'), ('viewer', 'Viewer')], default='member', max_length=10),
        ),
        migrations.RunPython(set_personal_organizations, migrations.RunPython.noop),
    ]
