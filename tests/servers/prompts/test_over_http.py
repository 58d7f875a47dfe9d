"""prompts/get of an upstream prompt at /mcp/<slug>, served by a real uvicorn process that asks
the real upstream MCP server of tests/servers/upstream: the upstream's messages on success, a
JSON-RPC -32603 error naming the prompt when the upstream cannot be used."""

import pytest

from accounts.models import ApiKey, User
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.servers.upstream.fixtures import free_port


@pytest.fixture(scope="module")
def open_server(live_database):
    """A server process whose deployment allow-list admits loopback."""
    server = LiveServer(live_database, extra_env={"OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8"})
    yield server
    server.stop()


def upstream_prompt(name, url, **config):
    return {
        "name": name,
        "description": "Greet someone.",
        "arguments": [{"name": "who", "required": True}],
        "kind": "upstream",
        "config": {"url": url, "prompt": "greet", **config},
    }


def setup_server(committed, unique, upstream) -> tuple[str, str]:
    def make():
        user = User.objects.create_user(f"prompt-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        definition = {
            "slug": f"prompt-{unique}",
            "name": "prompting",
            "prompts": [
                upstream_prompt("hello", upstream.url),
                upstream_prompt("down", f"http://127.0.0.1:{free_port()}/mcp", timeoutSeconds=5),
            ],
        }
        server = import_definition(definition, org)
        _, raw = ApiKey.issue(org, "k")
        return server.slug, raw

    return committed(make)


def test_an_upstream_prompt_is_got_over_the_endpoint(open_server, committed, unique, upstream):
    slug, raw = setup_server(committed, unique, upstream)
    client = RawMcp(open_server.mcp_url(slug), key=raw)
    client.initialize()
    listed = client.call("prompts/list")["result"]["prompts"]
    assert [(p["name"], p["arguments"]) for p in listed] == [
        ("hello", [{"name": "who", "required": True}]),
        ("down", [{"name": "who", "required": True}]),
    ]
    got = client.call("prompts/get", {"name": "hello", "arguments": {"who": "Ada"}})["result"]
    assert got == {
        "description": "Greet someone.",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Please greet Ada warmly."}}
        ],
    }
    down = client.call("prompts/get", {"name": "down", "arguments": {"who": "Ada"}})
    assert down["error"]["code"] == -32603
    assert down["error"]["message"].startswith("Prompt down could not be got: upstream MCP")
    assert "unreachable" in down["error"]["message"]
    assert down["error"]["data"] == {"name": "down"}


def test_without_the_allow_list_loopback_is_refused(asgi_server, committed, unique, upstream):
    slug, raw = setup_server(committed, unique, upstream)
    client = RawMcp(asgi_server.mcp_url(slug), key=raw)
    client.initialize()
    refused = client.call("prompts/get", {"name": "hello", "arguments": {"who": "Ada"}})
    assert refused["error"]["code"] == -32603
    assert "loopback address" in refused["error"]["message"]
