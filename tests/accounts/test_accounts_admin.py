import pytest
from django.urls import reverse

from accounts.models import ApiKey, User
from servers.definition import import_definition, load_text
from servers.models import Prompt, Resource, ResourceTemplate, Server, ServerVersion, Tool

pytestmark = pytest.mark.django_db

DEFINITION = """\
slug: admin-demo
name: admin demo
tools:
  - {name: t, description: d, inputSchema: {type: object}, kind: static,
     config: {content: [{type: text, text: hi}]}}
resources: [{uri: 'x://r', name: r, text: hi}]
resourceTemplates: [{uriTemplate: 'x://{id}', name: tpl, text: '{{ id }}'}]
prompts: [{name: p, description: d, messages: [{role: user, content: {type: text, text: hi}}]}]
"""


@pytest.fixture
def admin_client(client):
    staff = User.objects.create_superuser("root@example.com", "root password for tests")
    client.force_login(staff)
    return client


@pytest.fixture
def server(org):
    return import_definition(load_text(DEFINITION), org)


@pytest.mark.parametrize(
    "model", [User, ApiKey, Server, Tool, Resource, ResourceTemplate, Prompt, ServerVersion]
)
def test_every_model_has_a_working_admin_list(admin_client, model, server):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    assert admin_client.get(url).status_code == 200


def test_the_server_page_shows_its_parts_inline(admin_client, server):
    response = admin_client.get(reverse("admin:servers_server_change", args=[server.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert "x://r" in body and "x://{id}" in body


def test_the_key_list_shows_prefix_and_state_but_not_the_digest(admin_client, org):
    key, raw = ApiKey.issue(org, "listed")
    body = admin_client.get(reverse("admin:accounts_apikey_changelist")).content.decode()
    assert key.prefix in body and "active" in body
    assert key.digest not in body and raw not in body


def test_the_key_digest_is_read_only(admin_client, org):
    key, _ = ApiKey.issue(org, "k")
    url = reverse("admin:accounts_apikey_change", args=[key.pk])
    admin_client.post(url, {"organization": org.pk, "name": "renamed", "digest": "0" * 64})
    key.refresh_from_db()
    assert key.name == "renamed" and key.digest != "0" * 64


def test_the_revoke_action_revokes_the_selected_keys(admin_client, org):
    chosen, _ = ApiKey.issue(org, "chosen")
    kept, _ = ApiKey.issue(org, "kept")
    admin_client.post(
        reverse("admin:accounts_apikey_changelist"),
        {"action": "revoke", "_selected_action": [chosen.pk]},
    )
    chosen.refresh_from_db()
    kept.refresh_from_db()
    assert chosen.revoked_at is not None and kept.revoked_at is None
