"""A tool's view over the real endpoint: the tool links it from `_meta.ui.resourceUri`, the
resource is an MCP App with its policy in the read's `_meta.ui`, the SDK travels inside it, and
the extension is advertised only while some enabled tool has a view."""

import pytest

from accounts.models import ApiKey, User
from servers.compiled.compile import compile_definition
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition
from tests.gateway.endpoint.mcp_http import RawMcp

APPS = "io.modelcontextprotocol/ui"
TABLE_VIEW = {
    "template": "table",
    "title": "Echoes",
    "csp": {"connectDomains": ["https://api.example.com"]},
    "permissions": {"clipboardWrite": {}},
}


def tenant(committed, unique, prefix, change):
    def make():
        user = User.objects.create_user(f"{prefix}-{unique}@example.com", "long enough password 3")
        org = user.personal_organization()
        definition = server_definition(f"{prefix}-{unique}")
        change(definition)
        server = import_definition(definition, org)
        _, raw = ApiKey.issue(org, "views key")
        return server.slug, raw

    return committed(make)


@pytest.fixture
def with_view(committed, unique):
    def change(definition):
        echo = definition["tools"][0]
        echo["_meta"] = {"example.com/kept": True}
        echo["view"] = TABLE_VIEW

    return tenant(committed, unique, "view", change)


def test_a_tool_with_a_view_links_an_mcp_app_and_the_extension_is_advertised(
    asgi_server, with_view
):
    slug, raw = with_view
    client = RawMcp(asgi_server.mcp_url(slug), key=raw)
    extensions = client.initialize()["capabilities"]["extensions"]
    assert extensions[APPS] == {"mimeTypes": ["text/html;profile=mcp-app"]}

    tools = {t["name"]: t for t in client.call("tools/list")["result"]["tools"]}
    meta = tools["echo"]["_meta"]
    uri = meta["ui"]["resourceUri"]
    assert uri.startswith("ui://views/echo/")
    assert meta["example.com/kept"] is True  # the tool's own _meta stays
    assert "_meta" not in tools["slow_steps"]

    listed = {r["uri"]: r for r in client.call("resources/list")["result"]["resources"]}
    assert listed[uri]["mimeType"] == "text/html;profile=mcp-app"

    read = client.call("resources/read", {"uri": uri})["result"]["contents"]
    assert len(read) == 1
    content = read[0]
    assert content["uri"] == uri and content["mimeType"] == "text/html;profile=mcp-app"
    assert content["_meta"] == {
        "ui": {
            "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": []},
            "prefersBorder": True,
            "permissions": {"clipboardWrite": {}},
        }
    }
    html = content["text"]
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    # The official SDK is inside the document: hosts allow no script from anywhere by default.
    assert "const McpApps={" in html and "new McpApps.App(" in html
    assert "<title>Echoes</title>" in html


def test_a_server_whose_only_view_is_on_a_disabled_tool_advertises_no_extension(
    asgi_server, committed, unique
):
    def change(definition):
        echo = definition["tools"][0]
        echo["view"] = TABLE_VIEW
        echo["enabled"] = False

    slug, raw = tenant(committed, unique, "noview", change)
    client = RawMcp(asgi_server.mcp_url(slug), key=raw)
    assert "extensions" not in client.initialize()["capabilities"]
    resources = client.call("resources/list")["result"]["resources"]
    assert not [r for r in resources if r["uri"].startswith("ui://")]


def test_a_hand_written_app_resource_carries_its_policy_in_the_read(asgi_server, committed, unique):
    policy = {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}}

    def change(definition):
        definition["resources"].append(
            {
                "uri": "ui://hand/written",
                "name": "hand",
                "mimeType": "text/html;profile=mcp-app",
                "text": "<!doctype html><p>hi</p>",
                "_meta": policy,
            }
        )

    slug, raw = tenant(committed, unique, "hand", change)
    client = RawMcp(asgi_server.mcp_url(slug), key=raw)
    client.initialize()
    content = client.call("resources/read", {"uri": "ui://hand/written"})["result"]["contents"][0]
    assert content["_meta"] == policy and content["text"] == "<!doctype html><p>hi</p>"


def compiled_uri(view: dict) -> str:
    definition = server_definition("views-uri")
    definition["tools"][0]["view"] = view
    snapshot = compile_definition(definition, server_id=1, organization_id=1, generation="g")
    return snapshot.tools["echo"].wire["_meta"]["ui"]["resourceUri"]


def test_a_changed_view_is_a_new_resource_so_hosts_do_not_keep_the_old_one():
    first = compiled_uri({"template": "table"})
    assert compiled_uri({"template": "table"}) == first
    assert compiled_uri({"template": "table", "title": "Other"}) != first


def test_a_view_compiles_from_the_definition_alone():
    # No database fixture: a query here would raise. Views add nothing to the warm path.
    definition = server_definition("views-memory")
    definition["tools"][0]["view"] = {"template": "card"}
    snapshot = compile_definition(definition, server_id=1, organization_id=1, generation="g")
    assert snapshot.capabilities["extensions"][APPS]
