"""`manage.py server export` of a server whose tools and resources use vault secrets: the
export names the secrets ({{ secrets.NAME }}) and never holds a value, also after the server
has been used (an upstream refresh writes to the tool rows; a fetched read fills the cache)."""

import io
import json

import pytest
import yaml
from asgiref.sync import async_to_sync
from django.core.management import call_command

from mcp_protocol.context import NullContext
from servers.definition import export_definition
from servers.methods import resources_read
from servers.models import Server
from servers.snapshot import compile_definition
from servers.upstream.sync import refresh_server
from tests.servers.upstream.fixtures import TOKEN, UpstreamProcess
from vault.models import Secret

pytestmark = pytest.mark.django_db

LIVE = {
    "API_TOKEN": "live-api-token-7d1f",
    "API_PASSWORD": "live-password-c3e0",
    "DOCS_KEY": "live-docs-key-2b9a",
    "MCP_TOKEN": TOKEN,
}


@pytest.fixture(scope="session")
def httpserver_listen_address():
    return ("127.0.0.1", 0)


@pytest.fixture
def mcp_upstream():
    """The real upstream MCP server, answering only `Authorization: Bearer TOKEN`."""
    process = UpstreamProcess(token=TOKEN)
    yield process
    process.stop()


def run(*args) -> str:
    out = io.StringIO()
    call_command("server", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def definition(api_url: str, upstream_url: str) -> dict:
    mcp_auth = {"Authorization": "Bearer {{ secrets.MCP_TOKEN }}"}
    return {
        "slug": "with-secrets",
        "name": "with secrets",
        "http": {
            "auth": {"type": "basic", "username": "me", "password": "{{ secrets.API_PASSWORD }}"}
        },
        "tools": [
            {
                "name": "get_item",
                "description": "Get an item.",
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
                "kind": "http",
                "config": {
                    "url": api_url + "/items/{id}",
                    "auth": {"type": "bearer", "token": "{{ secrets.API_TOKEN }}"},
                },
            },
            {
                "name": "add",
                "description": "Add two integers.",
                "inputSchema": {"type": "object"},
                "kind": "upstream",
                "config": {"url": upstream_url, "headers": mcp_auth, "tool": "add"},
            },
        ],
        "resources": [
            {
                "uri": "docs://readme",
                "name": "readme",
                "kind": "fetched",
                "config": {
                    "url": api_url + "/readme",
                    "auth": {
                        "type": "apiKey",
                        "name": "X-Docs-Key",
                        "value": "{{ secrets.DOCS_KEY }}",
                    },
                    "cacheTtlSeconds": 60,
                },
            },
            {
                "uri": "notes://welcome",
                "name": "welcome",
                "kind": "upstream",
                "config": {"url": upstream_url, "headers": mcp_auth},
            },
        ],
    }


def test_an_export_names_secrets_and_never_holds_their_values(
    tmp_path, user, org, httpserver, mcp_upstream, settings
):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    for name, value in LIVE.items():
        Secret.store(org, name, value, test_value=f"test-{value}")
    httpserver.expect_request("/readme").respond_with_data("# Readme", content_type="text/plain")
    path = tmp_path / "server.yaml"
    path.write_text(
        yaml.safe_dump(definition(httpserver.url_for("").rstrip("/"), mcp_upstream.url))
    )
    run("import", str(path), "--owner", user.email)
    server = Server.objects.get(slug="with-secrets")

    # Use the server: the upstream refresh writes `synced` into the tool row, the read of the
    # fetched resource sends the key and fills the Redis cache.
    (report,) = refresh_server(server)
    assert report.status == "ok"
    snapshot = compile_definition(
        export_definition(server),
        server_id=server.pk,
        organization_id=org.pk,
        generation="1",
    )
    ctx = NullContext()
    result = async_to_sync(resources_read)(snapshot, {"uri": "docs://readme"}, ctx)
    assert result["contents"][0]["text"] == "# Readme"
    assert httpserver.log[0][0].headers["X-Docs-Key"] == LIVE["DOCS_KEY"]
    upstream_read = async_to_sync(resources_read)(snapshot, {"uri": "notes://welcome"}, ctx)
    assert upstream_read["contents"][0]["text"] == "Welcome aboard."

    as_yaml = run("export", "with-secrets")
    as_json = run("export", "with-secrets", "--format", "json")
    exported = json.loads(as_json)
    assert yaml.safe_load(as_yaml) == exported
    assert exported["tools"][1]["config"]["synced"]  # the refresh did write to the row
    for value in LIVE.values():
        for text in (as_yaml, as_json):
            assert value not in text and f"test-{value}" not in text
    for name in LIVE:
        assert f"{{{{ secrets.{name} }}}}" in as_json
