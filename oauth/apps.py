from django.apps import AppConfig


class OauthConfig(AppConfig):
    name = "oauth"
    verbose_name = "OAuth"

    def ready(self):
        from . import signals  # noqa: F401
