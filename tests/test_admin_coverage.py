"""Staff can see every model of the project in Django admin."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import reverse

from accounts.models import User

PROJECT_APPS = ("accounts", "servers", "vault", "activity", "api", "mcptasks", "oauth", "audit")


def test_every_project_model_is_registered_in_admin():
    missing = [
        f"{model._meta.app_label}.{model.__name__}"
        for model in apps.get_models()
        if model._meta.app_label in PROJECT_APPS and model not in admin.site._registry
    ]
    assert missing == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "model",
    [
        m
        for m in apps.get_models()
        if m._meta.app_label in ("vault", "activity", "api", "mcptasks", "oauth", "audit")
    ],
    ids=lambda m: m.__name__,
)
def test_every_admin_list_opens(client, model):
    client.force_login(User.objects.create_superuser("staff@example.com", "staff password 123"))
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    assert client.get(url).status_code == 200
