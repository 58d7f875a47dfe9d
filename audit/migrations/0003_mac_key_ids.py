from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("audit", "0002_append_only_guard")]

    operations = [
        migrations.AddField(
            model_name="auditevent",
            name="key_id",
            field=models.CharField(default="", max_length=32),
        ),
        migrations.AddField(
            model_name="auditanchor",
            name="key_id",
            field=models.CharField(default="", max_length=32),
        ),
        migrations.AddField(
            model_name="auditanchor",
            name="mac",
            field=models.CharField(default="", max_length=64),
        ),
    ]
