"""A stream that stays open shows in the open inspector when it opens, not only when it ends:
a session's GET stream and a 2026-07-28 `subscriptions/listen` stream, each on a live server,
arrive as an event marked open while the stream is still open, then again under the same id,
marked closed, once the client hangs up."""

import json

import httpx2

from tests.waiting import stays_async

from .conftest import watching

VERSION = "2025-11-25"
MODERN = "2026-07-28"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "streaming-client", "version": "2.0"},
    },
}
LISTEN_PARAMS = {
    "notifications": {"toolsListChanged": True},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "listening-client", "version": "3.0"},
    },
}


async def session_get(http, url, key):
    opened = await http.post(
        url,
        json=INIT,
        headers={
            "authorization": f"Bearer {key}",
            "accept": "application/json, text/event-stream",
        },
    )
    headers = {
        "authorization": f"Bearer {key}",
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": VERSION,
        "accept": "text/event-stream",
    }
    return http.stream("GET", url, headers=headers)


async def listen(http, url, key):
    body = {"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen", "params": LISTEN_PARAMS}
    headers = {
        "authorization": f"Bearer {key}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "subscriptions/listen",
    }
    return http.stream("POST", url, content=json.dumps(body), headers=headers)


async def check_stream_shows_open_then_closed(asgi_server, tenant, cookie, open_stream, method):
    url = asgi_server.mcp_url(tenant.slug)
    async with (
        watching(asgi_server, tenant.slug, cookie) as watch,
        httpx2.AsyncClient(timeout=30) as http,
    ):
        async with await open_stream(http, url, tenant.raw) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            # The stream is still open here: its event must already have arrived.
            opened = await watch.event(lambda e: e.get("stream") == "open", timeout=3)
            assert (opened["method"], opened["status"], opened["outcome"]) == (method, 200, "ok")
            await stays_async(
                lambda: not [e for e in watch.seen if e.get("stream") == "closed"],
                0.3,
                what="no closed event while the stream is open",
            )
        closed = await watch.event(lambda e: e.get("stream") == "closed", timeout=10)
    assert closed["id"] == opened["id"]
    assert closed["latencyMs"] >= opened["latencyMs"]
    return opened


async def test_a_session_get_stream_shows_when_it_opens_and_again_when_it_closes(
    asgi_server, tenant, owner_cookie
):
    opened = await check_stream_shows_open_then_closed(
        asgi_server, tenant, owner_cookie, session_get, "GET stream"
    )
    assert opened["client"]["name"] == "streaming-client"
    assert opened["revision"] == VERSION


async def test_a_listen_stream_shows_when_it_opens_and_again_when_it_closes(
    asgi_server, tenant, owner_cookie
):
    opened = await check_stream_shows_open_then_closed(
        asgi_server, tenant, owner_cookie, listen, "subscriptions/listen"
    )
    assert opened["client"]["name"] == "listening-client"
    assert opened["revision"] == MODERN
