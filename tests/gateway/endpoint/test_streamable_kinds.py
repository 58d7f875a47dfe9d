"""Whether a tools/call is answered on an event stream follows its kind's contract
(ToolKind.streams_progress), for every registered kind, through a real server."""

import pytest

from accounts.models import ApiKey, User
from servers.definition import import_definition
from servers.kinds import KINDS
from tests.gateway.endpoint.mcp_http import RawMcp

# One tool of each kind; those that reach out go to a port nothing listens on, so their call
# ends at once in a tool error, after the endpoint chose how to answer.
CLOSED = "http://127.0.0.1:9/x"
CONFIGS = {
    "static": {"content": [{"type": "text", "text": "static"}]},
    "workflow": {"steps": [{"return": {"content": [{"type": "text", "text": "workflow"}]}}]},
    "http": {"method": "GET", "url": CLOSED},
    "upstream": {"url": CLOSED, "tool": "search"},
    "code": {"language": "python", "source": "def main(args):\n    return 'code'\n"},
}


@pytest.fixture
def every_kind(asgi_server, committed, unique):
    def make():
        user = User.objects.create_user(f"kinds-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        tools = [
            {
                "name": f"a_{name}",
                "description": f"A {name} tool.",
                "inputSchema": {"type": "object"},
                "kind": name,
                "config": CONFIGS[name],
            }
            for name in KINDS
        ]
        server = import_definition(
            {"slug": f"kinds-{unique}", "name": "kinds", "auth": "api_key", "tools": tools}, org
        )
        _, raw = ApiKey.issue(org, "kinds key")
        return RawMcp(asgi_server.mcp_url(server.slug), key=raw)

    return committed(make)


def test_the_configs_here_cover_every_kind():
    assert set(CONFIGS) == set(KINDS)


@pytest.mark.parametrize("name", list(KINDS))
def test_a_call_is_streamed_exactly_when_its_kind_streams_progress(every_kind, name):
    every_kind.initialize()
    response, messages = every_kind.request("tools/call", {"name": f"a_{name}", "arguments": {}})
    streamed = response.headers["content-type"].startswith("text/event-stream")
    assert streamed is KINDS[name].streams_progress
    assert "result" in messages[-1]
