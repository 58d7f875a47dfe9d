from django.apps import AppConfig


class OauthConfig(AppConfig):
    name = "oauth"
    verbose_name = "OAuth"

    def ready(self) -> None:
        from . import signals  # noqa: F401
