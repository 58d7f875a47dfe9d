"""Mallory, a member of another organization, must not learn that Alice's objects exist."""

from datetime import UTC, datetime

import pytest

from accounts.models import ApiKey
from activity.models import CallLog
from api.models import PersonalAccessToken
from servers import publishing
from servers.models import Server
from vault.models import Secret


@pytest.fixture
def alices(server, org, user):
    key, _ = ApiKey.issue(org, "alice-key")
    token, _ = PersonalAccessToken.issue(user, "alice-token")
    call = CallLog.objects.create(
        organization=org,
        server=server,
        server_slug=server.slug,
        at=datetime(2026, 11, 20, tzinfo=UTC),
        method="tools/call",
        tool="echo",
    )
    publishing.publish(server)
    secret = Secret.store(org, "ALICE_SECRET", "v")
    return {
        "secret": secret.pk,
        "org": org.slug,
        "key": key.pk,
        "token": token.pk,
        "call": call.pk,
        "tool": server.tools.get().pk,
        "resource": server.resources.get().pk,
        "template": server.resource_templates.get().pk,
        "prompt": server.prompts.get().pk,
    }


DETAIL_REQUESTS = [
    ("get", "/api/organizations/{org}/"),
    ("patch", "/api/organizations/{org}/"),
    ("get", "/api/organizations/{org}/analytics/"),
    ("get", "/api/servers/weather/"),
    ("put", "/api/servers/weather/"),
    ("patch", "/api/servers/weather/"),
    ("delete", "/api/servers/weather/"),
    ("get", "/api/servers/weather/export/"),
    ("get", "/api/servers/weather/analytics/"),
    ("post", "/api/servers/weather/rollback/"),
    ("get", "/api/servers/weather/versions/"),
    ("post", "/api/servers/weather/versions/"),
    ("get", "/api/servers/weather/versions/1.0.0/"),
    ("get", "/api/servers/weather/tools/"),
    ("post", "/api/servers/weather/tools/"),
    ("get", "/api/servers/weather/tools/{tool}/"),
    ("put", "/api/servers/weather/tools/{tool}/"),
    ("patch", "/api/servers/weather/tools/{tool}/"),
    ("delete", "/api/servers/weather/tools/{tool}/"),
    ("get", "/api/servers/weather/resources/"),
    ("post", "/api/servers/weather/resources/"),
    ("get", "/api/servers/weather/resources/{resource}/"),
    ("patch", "/api/servers/weather/resources/{resource}/"),
    ("delete", "/api/servers/weather/resources/{resource}/"),
    ("get", "/api/servers/weather/resource-templates/"),
    ("post", "/api/servers/weather/resource-templates/"),
    ("get", "/api/servers/weather/resource-templates/{template}/"),
    ("patch", "/api/servers/weather/resource-templates/{template}/"),
    ("delete", "/api/servers/weather/resource-templates/{template}/"),
    ("get", "/api/servers/weather/prompts/"),
    ("post", "/api/servers/weather/prompts/"),
    ("get", "/api/servers/weather/prompts/{prompt}/"),
    ("patch", "/api/servers/weather/prompts/{prompt}/"),
    ("delete", "/api/servers/weather/prompts/{prompt}/"),
    ("get", "/api/keys/{key}/"),
    ("put", "/api/keys/{key}/"),
    ("patch", "/api/keys/{key}/"),
    ("delete", "/api/keys/{key}/"),
    ("get", "/api/tokens/{token}/"),
    ("delete", "/api/tokens/{token}/"),
    ("get", "/api/calls/{call}/"),
    ("get", "/api/secrets/{secret}/"),
    ("patch", "/api/secrets/{secret}/"),
    ("put", "/api/secrets/{secret}/"),
    ("delete", "/api/secrets/{secret}/"),
    ("post", "/api/servers/weather/tools/{tool}/test/"),
    ("post", "/api/servers/weather/tools/import-api/preview/"),
    ("post", "/api/servers/weather/tools/import-api/commit/"),
]


@pytest.mark.parametrize(("method", "template"), DETAIL_REQUESTS)
def test_an_outsider_gets_404_for_every_object_of_another_organization(
    outsider_api, alices, method, template
):
    url = template.format(**alices)
    body = {"name": "mine now", "version": "1.0.0", "callLogRetentionDays": 1}
    response = getattr(outsider_api, method)(url, body, format="json")
    assert response.status_code == 404, (url, response.content)
    assert response.json()["error"]["code"] == "not_found"


def test_the_outsiders_requests_changed_nothing(outsider_api, alices, server):
    for method, template in DETAIL_REQUESTS:
        getattr(outsider_api, method)(template.format(**alices), {"name": "x"}, format="json")
    assert Server.objects.filter(slug="weather", name="weather").exists()
    assert server.tools.get().name == "echo"
    assert ApiKey.objects.get(pk=alices["key"]).is_active
    assert PersonalAccessToken.objects.get(pk=alices["token"]).is_active
    assert Secret.objects.get(pk=alices["secret"]).reveal() == "v"


@pytest.mark.parametrize(
    "url",
    [
        "/api/organizations/",
        "/api/servers/",
        "/api/keys/",
        "/api/tokens/",
        "/api/calls/",
        "/api/calls/?server=weather",
        "/api/calls.csv",
        "/api/secrets/",
    ],
)
def test_lists_never_show_another_organizations_objects(outsider_api, alices, url):
    response = outsider_api.get(url)
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    text = body.decode()
    for needle in ("weather", "alice-key", "alice-token", "ALICE_SECRET", alices["org"]):
        assert needle not in text


def test_an_outsider_analytics_view_of_their_own_org_ignores_others(
    outsider_api, alices, outsider_org
):
    result = outsider_api.get(f"/api/organizations/{outsider_org.slug}/analytics/").json()
    assert result["calls"] == 0


def test_an_outsider_cannot_reach_another_organizations_servers_through_a_key(
    outsider_api, alices, org, outsider_org
):
    response = outsider_api.post("/api/keys/", {"name": "k", "servers": ["weather"]}, format="json")
    assert response.status_code == 400
    assert "weather" in response.json()["error"]["fields"]["servers"][0]
    assert not ApiKey.objects.filter(name="k", organization__in=[org, outsider_org]).exists()
