"""The demo server served by the real endpoint with the key `manage.py demo` would print."""

import pytest

from accounts.models import ApiKey, User
from servers.definition import import_definition, load_file
from tests.gateway.endpoint.mcp_http import RawMcp


@pytest.fixture
def demo(asgi_server, committed, unique, examples_dir):
    def make():
        user = User.objects.create_user(f"demo-{unique}@example.com", "long enough password 5")
        data = load_file(examples_dir / "demo.yaml")
        data["slug"] = f"demo-{unique}"
        org = user.personal_organization()
        server = import_definition(data, org)
        _, raw = ApiKey.issue(org, "demo key", [server])
        return asgi_server.mcp_url(server.slug), raw

    return committed(make)


def test_the_demo_server_needs_its_key(demo):
    url, _ = demo
    response = RawMcp(url).post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
    assert response.status_code == 401


def test_the_demo_tools_answer_with_the_key(demo):
    url, raw = demo
    client = RawMcp(url, key=raw)
    client.initialize()
    added = client.call("tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})["result"]
    assert added["structuredContent"] == {"sum": 42}
    echoed = client.call("tools/call", {"name": "echo", "arguments": {"message": "hi"}})
    assert echoed["result"]["structuredContent"] == {"echo": "hi"}
    greeting = client.call("resources/read", {"uri": "demo://greetings/french"})["result"]
    assert greeting["contents"][0]["text"] == "Bonjour !"
    prompt = client.call("prompts/get", {"name": "explain", "arguments": {"topic": "MCP"}})[
        "result"
    ]
    assert prompt["messages"][0]["content"]["text"] == (
        "Explain MCP to me at beginner level, with one example."
    )
