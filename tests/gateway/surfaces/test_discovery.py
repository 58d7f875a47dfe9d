from gateway.surfaces.discovery import discovery_document
from servers.compiled.features import extensions

from .conftest import calculator_definition, make_snapshot

APP = {
    "uri": "ui://calc/panel",
    "name": "panel",
    "mimeType": "text/html;profile=mcp-app",
    "text": "<!doctype html><html><body>hi</body></html>",
}


def test_the_document_names_the_server_its_capabilities_and_transports(snapshot):
    document = discovery_document(snapshot)
    assert document["serverInfo"] == {"name": "my-calculator", "version": "2.1.0"}
    assert document["mcpVersion"] == "2026-07-28"
    assert {"tools", "resources", "prompts", "logging"} <= set(document["capabilities"])
    assert document["transports"] == [
        {"type": "streamable-http", "endpoint": "/mcp/calc"},
        {"type": "sse", "endpoint": "/mcp/calc/sse"},
    ]


def test_a_pinned_version_has_its_own_endpoints(snapshot):
    document = discovery_document(snapshot, "/mcp/calc@2.1.0")
    assert document["transports"][0]["endpoint"] == "/mcp/calc@2.1.0"


def test_no_extensions_for_a_server_that_uses_none(snapshot):
    assert "extensions" not in discovery_document(snapshot)["capabilities"]


def test_tasks_are_advertised_only_when_a_tool_supports_them():
    definition = calculator_definition()
    definition["tools"][0]["execution"] = {"taskSupport": "optional"}
    document = discovery_document(make_snapshot(definition))
    assert document["capabilities"]["extensions"] == {"io.modelcontextprotocol/tasks": {}}
    definition["tools"][0]["execution"] = {"taskSupport": "forbidden"}
    assert extensions(make_snapshot(definition)) == {}


def test_mcp_apps_are_advertised_only_for_a_ui_resource_of_the_app_type():
    with_app = make_snapshot(resources=[APP])
    assert discovery_document(with_app)["capabilities"]["extensions"] == {
        "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}
    }
    plain_html = make_snapshot(resources=[{**APP, "mimeType": "text/html"}])
    assert extensions(plain_html) == {}
    not_ui = make_snapshot(resources=[{**APP, "uri": "test://panel"}])
    assert extensions(not_ui) == {}
