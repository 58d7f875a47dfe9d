"""The old HTTP+SSE transport (2024-11-05 clients) at /mcp/<slug>/sse."""

import json
import threading

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client

from tests.gateway.endpoint.mcp_http import parse_sse


async def test_it_serves_the_official_sdk_sse_client(asgi_server, tenant):
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Old Timer"})

    transport = sse_client(
        asgi_server.mcp_url(tenant.slug) + "/sse",
        headers={"Authorization": f"Bearer {tenant.raw}"},
    )
    async with Client(transport, mode="legacy", elicitation_callback=on_elicit) as client:
        tools = await client.list_tools()
        assert "echo" in {t.name for t in tools.tools}
        echoed = await client.call_tool("echo", {"message": "over sse"})
        assert echoed.content[0].text == "You said over sse"
        greeted = await client.call_tool("ask_name", {})
        assert asked == ["What is your name?"]
        assert greeted.content[0].text == "Hello Old Timer"
        prompt = await client.get_prompt("greet", {"who": "Bo"})
        assert prompt.messages[0].content.text == "Hi Bo"


class StreamReader:
    """Reads an SSE stream in a thread so the test can POST while it stays open.

    `close` ends the stream and joins the thread, so no reader outlives its test (and none
    reports a late error against the next one)."""

    def __init__(self, url, key):
        self.text = ""
        self.http = httpx2.Client(timeout=20)
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, args=(url, key), daemon=True)
        self._thread.start()

    def _run(self, url, key):
        headers = {"accept": "text/event-stream", "authorization": f"Bearer {key}"}
        try:
            with self.http.stream("GET", url, headers=headers) as response:
                for chunk in response.iter_text():
                    with self._changed:
                        self.text += chunk
                        self._changed.notify_all()
        except Exception:  # noqa: BLE001 - closed by the test, whatever the client raises
            pass
        finally:
            with self._changed:
                self._changed.notify_all()

    def wait_for(self, needle, seconds=10):
        with self._changed:
            return self._changed.wait_for(
                lambda: needle in self.text or not self._thread.is_alive(), timeout=seconds
            ) and (needle in self.text)

    @property
    def endpoint(self):
        self.wait_for("endpoint")
        return next(
            e["data"] for e in parse_sse(self.text) if isinstance(e["data"], str) and e["data"]
        )

    def close(self):
        self.http.close()
        self._thread.join(10)
        assert not self._thread.is_alive(), "the SSE reader thread outlived its test"


def test_it_answers_in_the_post_body_and_on_that_sessions_stream_only(asgi_server, tenant):
    base = asgi_server.url
    url = asgi_server.mcp_url(tenant.slug) + "/sse"
    stream_a, stream_b = StreamReader(url, tenant.raw), StreamReader(url, tenant.raw)
    try:
        assert stream_a.endpoint.startswith(f"/mcp/{tenant.slug}/messages/?session_id=")
        assert stream_a.endpoint != stream_b.endpoint
        headers = {"content-type": "application/json", "authorization": f"Bearer {tenant.raw}"}
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        }
        answered = httpx2.post(base + stream_a.endpoint, content=json.dumps(init), headers=headers)
        assert answered.status_code == 200
        assert answered.json()["result"]["protocolVersion"] == "2024-11-05"
        ping = httpx2.post(
            base + stream_a.endpoint,
            content=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
            headers=headers,
        )
        assert ping.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}

        assert stream_a.wait_for('"id":2')
        messages = [e["data"] for e in parse_sse(stream_a.text) if isinstance(e["data"], dict)]
        assert [m["id"] for m in messages] == [1, 2]
        assert "event: message" in stream_a.text
        # Session B saw none of it: its stream only carries keep-alives.
        assert stream_b.wait_for(": keep-alive")
        assert '"id"' not in stream_b.text
    finally:
        stream_a.close()
        stream_b.close()


def test_it_refuses_messages_for_an_unknown_session(asgi_server, tenant):
    response = httpx2.post(
        asgi_server.mcp_url(tenant.slug) + "/messages/?session_id=" + "f" * 32,
        content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        headers={"content-type": "application/json", "authorization": f"Bearer {tenant.raw}"},
    )
    assert response.status_code == 404


def test_it_needs_the_key_on_the_stream_too(asgi_server, tenant):
    response = httpx2.get(
        asgi_server.mcp_url(tenant.slug) + "/sse", headers={"accept": "text/event-stream"}
    )
    assert response.status_code == 401
