from django.apps import AppConfig


class VaultConfig(AppConfig):
    name = "vault"

    def ready(self):
        from . import resolve  # noqa: F401  (connects the cache-invalidation signals)
