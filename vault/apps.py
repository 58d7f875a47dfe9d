from django.apps import AppConfig


class VaultConfig(AppConfig):
    name = "vault"

    def ready(self) -> None:
        from . import resolve  # noqa: F401  (connects the cache-invalidation signals)
