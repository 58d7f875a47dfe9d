"""MCP Apps: a tool points at a ui:// resource, and the extension is advertised only then."""

import httpx2
import pytest

from accounts.models import ApiKey, User
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition
from tests.gateway.endpoint.mcp_http import RawMcp

APP_HTML = "<!doctype html><html><body><h1>Weather</h1></body></html>"


@pytest.fixture
def app_tenant(committed, unique):
    def make():
        user = User.objects.create_user(f"apps-{unique}@example.com", "long enough password 3")
        org = user.personal_organization()
        definition = server_definition(f"a-{unique}")
        definition["tools"][0]["_meta"] = {"ui": {"resourceUri": "ui://weather/view"}}
        definition["resources"].append(
            {
                "uri": "ui://weather/view",
                "name": "weather-view",
                "mimeType": "text/html;profile=mcp-app",
                "text": APP_HTML,
            }
        )
        server = import_definition(definition, org)
        _, raw = ApiKey.issue(org, "apps key")
        return server.slug, raw

    return committed(make)


def test_it_serves_an_app_and_advertises_the_extension(asgi_server, app_tenant):
    slug, raw = app_tenant
    client = RawMcp(asgi_server.mcp_url(slug), key=raw)
    capabilities = client.initialize()["capabilities"]
    assert "io.modelcontextprotocol/ui" in capabilities["extensions"]
    tools = client.call("tools/list")["result"]["tools"]
    echo = next(t for t in tools if t["name"] == "echo")
    assert echo["_meta"]["ui"]["resourceUri"] == "ui://weather/view"
    read = client.call("resources/read", {"uri": "ui://weather/view"})["result"]["contents"][0]
    assert read["mimeType"] == "text/html;profile=mcp-app" and read["text"] == APP_HTML
    discovery = httpx2.get(
        f"{asgi_server.mcp_url(slug)}/.well-known/mcp.json",
        headers={"authorization": f"Bearer {raw}"},
    ).json()
    assert "io.modelcontextprotocol/ui" in discovery["capabilities"]["extensions"]


def test_a_server_without_apps_advertises_no_extension(client):
    assert "extensions" not in client.initialize()["capabilities"]
