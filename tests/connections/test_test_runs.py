"""A tool with a connection tried from the dashboard (a test run) acts as the person trying it:
their token goes to the API and is masked everywhere the run shows; someone not connected gets
the link to connect."""

import json

import pytest

from connections.models import Connection, Provider
from servers.models import Server, Tool
from servers.testrun import test_run_sync
from vault.crypto import encrypt

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="session")
def httpserver_listen_address():
    return ("127.0.0.1", 0)


@pytest.fixture(autouse=True)
def allow_loopback(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]


@pytest.fixture
def tool(org, httpserver):
    Provider.objects.create(
        organization=org,
        key="corp",
        name="Corp",
        authorization_url="https://as.example/authorize",
        token_url="https://as.example/token",
        client_id="cid",
    )
    server = Server.objects.create(organization=org, slug="mine", name="mine")
    return Tool.objects.create(
        server=server,
        name="me",
        description="The caller's account.",
        input_schema={"type": "object", "properties": {}},
        kind="http",
        config={"url": httpserver.url_for("/me"), "connection": "corp"},
    )


def test_a_test_run_sends_the_person_s_token_and_masks_it(tool, user, httpserver):
    Connection.objects.create(
        provider=tool.server.organization.oauth_providers.get(key="corp"),
        organization=tool.server.organization,
        user=user,
        access_token_ciphertext=encrypt("person-token-789"),
    )
    httpserver.expect_request(
        "/me", headers={"Authorization": "Bearer person-token-789"}
    ).respond_with_json({"login": "ada", "echo": "person-token-789"})
    report = test_run_sync(tool.server, "me", {}, user=user)
    assert report["request"]["headers"]["authorization"] in ("***", "Bearer ***")
    assert json.loads(report["response"]["body"]) == {"login": "ada", "echo": "***"}
    assert "person-token-789" not in json.dumps(report)


def test_a_test_run_by_someone_not_connected_shows_the_link(tool, user):
    report = test_run_sync(tool.server, "me", {}, user=user)
    assert report["result"]["isError"] is True
    text = report["result"]["content"][0]["text"]
    assert "Connect Corp" in text and "/connections/connect/" in text
