from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("oauth", "0002_governance_access_quotas"),
    ]

    operations = [
        migrations.AddField(
            model_name="refreshtoken",
            name="successor",
            field=models.TextField(blank=True, default=""),
        ),
    ]
