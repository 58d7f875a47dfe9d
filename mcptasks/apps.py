from django.apps import AppConfig


class McptasksConfig(AppConfig):
    name = "mcptasks"

    def ready(self):
        from .steps import register

        register()
