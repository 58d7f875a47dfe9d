from django.apps import AppConfig


class ServersConfig(AppConfig):
    name = "servers"

    def ready(self) -> None:
        from . import access_changes, changes, embeddings  # noqa: F401  (connects signal handlers)
