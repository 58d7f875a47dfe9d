"""Upstream resources through the snapshot and resources/read, against the real upstream MCP
server of tests/servers/upstream (the official SDK, in a subprocess on loopback)."""

import pytest

from servers.resources import upstream as upstream_resources
from servers.upstream import health
from tests.servers.upstream.fixtures import TOKEN, free_port
from vault.models import Secret

from .conftest import read, read_fails, snapshot_of

pytestmark = pytest.mark.django_db


def resource(url, ours="notes://welcome", **config):
    return {"uri": ours, "name": "welcome", "kind": "upstream", "config": {"url": url, **config}}


def test_a_resource_of_the_upstream_is_read_through_ours(upstream, server, loopback_allowed):
    snapshot = snapshot_of(server, resource(upstream.url))
    assert read(snapshot, "notes://welcome") == {
        "contents": [
            {"uri": "notes://welcome", "mimeType": "text/plain", "text": "Welcome aboard."}
        ]
    }
    assert health.health(server.pk, upstream.url)["status"] == "ok"


def test_the_upstreams_uri_for_it_is_answered_under_ours(upstream, server, loopback_allowed):
    snapshot = snapshot_of(
        server, resource(upstream.url, ours="docs://monday", uri="notes://by-day/monday")
    )
    assert [r["uri"] for r in snapshot.resource_list] == ["docs://monday"]
    assert read(snapshot, "docs://monday")["contents"] == [
        {"uri": "docs://monday", "mimeType": "text/plain", "text": "Notes of monday."}
    ]


def test_credentials_come_from_the_vault_and_are_never_shown(
    guarded_upstream, org, server, loopback_allowed
):
    headers = {"Authorization": "Bearer {{ secrets.NOTES_TOKEN }}"}
    snapshot = snapshot_of(server, resource(guarded_upstream.url, headers=headers))
    missing = read_fails(snapshot, "notes://welcome")
    assert missing.code == -32603 and "NOTES_TOKEN" in missing.message

    Secret.store(org, "NOTES_TOKEN", "wrong-token-value")
    refused = read_fails(snapshot, "notes://welcome")
    assert refused.code == -32603 and "unreachable" in refused.message
    assert "wrong-token-value" not in refused.message

    Secret.store(org, "NOTES_TOKEN", TOKEN)
    assert read(snapshot, "notes://welcome")["contents"][0]["text"] == "Welcome aboard."


def test_a_resource_the_upstream_does_not_have_is_an_error(upstream, server, loopback_allowed):
    snapshot = snapshot_of(server, resource(upstream.url, uri="notes://nope"))
    error = read_fails(snapshot, "notes://welcome")
    assert error.code == -32603
    assert error.message.startswith("Resource notes://welcome could not be read: upstream MCP")
    assert error.data == {"uri": "notes://welcome"}


def test_an_unreachable_upstream_is_an_error_and_unhealthy(server, loopback_allowed):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    snapshot = snapshot_of(server, resource(url, timeoutSeconds=5))
    error = read_fails(snapshot, "notes://welcome")
    assert error.code == -32603
    assert "127.0.0.1" in error.message and "unreachable" in error.message
    assert health.health(server.pk, url)["status"] == "unreachable"


def test_loopback_is_refused_without_the_allow_list(upstream, server, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    snapshot = snapshot_of(server, resource(upstream.url))
    error = read_fails(snapshot, "notes://welcome")
    assert error.code == -32603 and "unreachable" in error.message
    assert "are not allowed: it is a loopback address." in error.message
    assert ".." not in error.message


@pytest.mark.parametrize(
    "config, message",
    [
        ({}, "config.url: required"),
        ({"url": "https://u:p@mcp.test/mcp"}, "config.url: credentials in the URL"),
        ({"url": "https://mcp.test/mcp", "transport": "ws"}, "config.transport: must be one"),
        ({"url": "https://mcp.test/mcp", "tool": "x"}, "config.tool: unknown field"),
        ({"url": "https://mcp.test/mcp", "uri": "no-scheme"}, "config.uri: must be"),
        ({"url": "https://mcp.test/mcp", "headers": {"Accept": "x"}}, "config.headers.Accept"),
    ],
)
def test_bad_configs_are_refused_naming_the_field(config, message):
    problems = upstream_resources.validate_config(config)
    assert any(problem.startswith(message) for problem in problems), problems
