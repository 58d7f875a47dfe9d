from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("mcptasks", "0002_task_dispatched_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="task",
            name="principal",
            field=models.CharField(blank=True, max_length=20),
        ),
        migrations.AddField(
            model_name="task",
            name="principal_id",
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="task",
            name="role",
            field=models.CharField(blank=True, max_length=10),
        ),
        migrations.AddField(
            model_name="task",
            name="credential_kind",
            field=models.CharField(blank=True, max_length=10),
        ),
        migrations.AddField(
            model_name="task",
            name="credential_id",
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="task",
            name="credential_name",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="task",
            name="client",
            field=models.CharField(blank=True, max_length=200),
        ),
    ]
