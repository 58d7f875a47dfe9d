from django.apps import AppConfig


class ServersConfig(AppConfig):
    name = "servers"

    def ready(self) -> None:
        from . import access_changes, changes, embedding_jobs  # noqa: F401  (signal handlers)
