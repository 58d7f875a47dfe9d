"""Configuring providers: presets fill the endpoints, the client secret is encrypted and never
answered, only admins may change them (accounts.policy), and every change is audited."""

import json
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from accounts.models import Membership, User
from accounts.policy import PermissionDenied
from audit.models import AuditEvent
from connections import providers
from connections.models import Provider
from connections.presets import PRESETS
from servers.definition import import_definition, load_file
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "connected-accounts"


def test_every_preset_fills_https_endpoints_and_a_name():
    assert set(PRESETS) == {
        "github",
        "google",
        "microsoft",
        "slack",
        "atlassian",
        "notion",
        "linear",
        "salesforce",
    }
    for preset in PRESETS.values():
        assert preset["authorization_url"].startswith("https://")
        assert preset["token_url"].startswith("https://")
        assert preset["name"]


def test_a_preset_provider_needs_only_a_client_id_and_secret(user, org):
    provider = providers.provider_create(
        actor=user, organization=org, preset="github", client_id="gh-id", client_secret="gh-secret"
    )
    assert provider.key == "github"
    assert provider.token_url == "https://github.com/login/oauth/access_token"
    assert "gh-secret" not in provider.client_secret_ciphertext
    assert provider.client_secret() == "gh-secret"
    described = providers.describe(provider)
    assert described["clientSecretSet"] is True
    assert "gh-secret" not in json.dumps(described)
    event = AuditEvent.objects.get(organization_id=org.pk, action="connection_provider.create")
    assert "gh-secret" not in json.dumps(event.diff)


def test_a_generic_provider_needs_its_endpoints(user, org):
    with pytest.raises(ValidationError) as refused:
        providers.provider_create(actor=user, organization=org, key="x", client_id="id")
    assert {"authorization_url", "token_url"} <= set(refused.value.message_dict)


def test_members_may_not_configure_providers(org):
    member = User.objects.create_user("member-conn@example.com", "long enough password 3")
    Membership.objects.create(user=member, organization=org, role=Membership.MEMBER)
    with pytest.raises(PermissionDenied):
        providers.provider_create(actor=member, organization=org, preset="slack", client_id="id")


def test_the_example_provider_is_accepted_by_the_api_and_its_secret_never_comes_back(user, org):
    api = client_for(user)
    body = json.loads((EXAMPLE / "provider.json").read_text())
    body["organization"] = org.slug
    created = api.post("/api/connection-providers/", body)
    assert created.status_code == 201, created.content
    answer = created.json()
    assert answer["key"] == "tasks" and answer["clientSecretSet"] is True
    assert "clientSecret" not in answer and body["clientSecret"] not in created.content.decode()
    listed = api.get("/api/connection-providers/").content.decode()
    assert body["clientSecret"] not in listed
    assert (
        Provider.objects.get(organization=org, key="tasks").client_secret() == body["clientSecret"]
    )


def test_the_example_server_imports_with_its_connections(org):
    server = import_definition(load_file(EXAMPLE / "server.yaml"), org)
    configs = {t.name: t.config for t in server.tools.all()}
    assert configs["list_my_tasks"]["connection"] == {"provider": "tasks", "scopes": ["tasks.read"]}
    assert configs["add_task"]["connection"]["name"] == "X-Tasks-Token"


def test_a_tool_naming_a_malformed_connection_is_refused(org):
    from servers.kinds.http import validate_config

    problems = validate_config(
        {"url": "https://api.example/x", "connection": {"provider": "Bad Name", "in": "body"}}
    )
    assert "config.connection.provider: must be a provider key" in " ".join(problems)
    assert any("config.connection.in" in p for p in problems)
