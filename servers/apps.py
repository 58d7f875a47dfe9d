from django.apps import AppConfig


class ServersConfig(AppConfig):
    name = "servers"

    def ready(self) -> None:
        from . import access_changes, changes  # noqa: F401  (connects the signal handlers)
