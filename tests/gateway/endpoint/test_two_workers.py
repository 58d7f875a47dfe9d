"""Any worker serves any request: two server processes share one Postgres and one Redis."""

import json
import threading

import pytest

from tests.conftest import LiveServer
from tests.gateway.endpoint.mcp_http import RawMcp, parse_sse


@pytest.fixture(scope="module")
def second_server(live_database):
    server = LiveServer(live_database)
    yield server
    server.stop()


def test_it_answers_an_elicitation_on_another_worker(asgi_server, second_server, tenant):
    on_a = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    on_a.initialize(capabilities={"elicitation": {}})
    on_b = RawMcp(second_server.mcp_url(tenant.slug), key=tenant.raw)
    on_b.session_id, on_b.version = on_a.session_id, on_a.version

    # The session made on A is known to B.
    assert on_b.call("tools/list")["result"]["tools"]

    seen = []
    answered = threading.Event()
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 77,
            "method": "tools/call",
            "params": {"name": "ask_name", "arguments": {}},
        }
    )
    with on_a.http.stream("POST", on_a.url, content=body, headers=on_a.headers()) as response:
        buffer = ""
        for chunk in response.iter_text():
            buffer += chunk
            messages = [e["data"] for e in parse_sse(buffer) if isinstance(e["data"], dict)]
            request = next((m for m in messages if m.get("method") == "elicitation/create"), None)
            if request and not answered.is_set():
                reply = on_b.post(
                    {
                        "jsonrpc": "2.0",
                        "id": request["id"],
                        "result": {"action": "accept", "content": {"name": "Linus"}},
                    }
                )
                assert reply.status_code == 202
                answered.set()
            seen = messages
            if any(m.get("id") == 77 for m in messages):
                break
    assert seen[-1]["result"]["content"][0]["text"] == "Hello Linus"


def test_it_resumes_a_stream_on_another_worker(asgi_server, second_server, tenant):
    on_a = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    on_a.initialize()
    response, messages = on_a.request("tools/call", {"name": "slow_steps", "arguments": {}})
    priming = parse_sse(response.text)[0]["id"]
    on_b = RawMcp(second_server.mcp_url(tenant.slug), key=tenant.raw)
    on_b.session_id, on_b.version = on_a.session_id, on_a.version
    resumed = on_b.http.get(
        on_b.url, headers={**on_b.headers(accept="text/event-stream"), "last-event-id": priming}
    )
    replayed = [e["data"] for e in parse_sse(resumed.text) if isinstance(e["data"], dict)]
    assert replayed == messages


def test_it_ends_a_session_everywhere(asgi_server, second_server, tenant):
    on_a = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    on_a.initialize()
    on_b = RawMcp(second_server.mcp_url(tenant.slug), key=tenant.raw)
    on_b.session_id, on_b.version = on_a.session_id, on_a.version
    assert on_b.http.delete(on_b.url, headers=on_b.headers()).status_code == 200
    response, _ = on_a.request("tools/list")
    assert response.status_code == 404
