from django.apps import AppConfig


class ScimConfig(AppConfig):
    name = "scim"
    verbose_name = "SCIM provisioning"
