from django.apps import AppConfig


class McptasksConfig(AppConfig):
    name = "mcptasks"
