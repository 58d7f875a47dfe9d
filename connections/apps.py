from django.apps import AppConfig


class ConnectionsConfig(AppConfig):
    name = "connections"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Connected accounts"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the removal receiver)
