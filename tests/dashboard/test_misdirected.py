"""An MCP client pointed at a dashboard page is told where the MCP endpoint is."""

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


@pytest.mark.parametrize(
    "path", ["/servers/weather/", "/servers/weather", "/servers/weather/connect/"]
)
def test_a_json_rpc_post_to_a_server_page_names_its_mcp_url(asgi_server, path):
    response = httpx2.post(asgi_server.url + path, json=INITIALIZE, headers=MCP_HEADERS, timeout=30)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["id"] == 7
    assert body["error"]["message"] == (
        f"{path} is a getmcp dashboard page, not an MCP endpoint: "
        f"point your MCP client at {asgi_server.url}/mcp/weather"
    )


def test_an_event_stream_get_of_the_home_page_says_where_servers_are(asgi_server):
    response = httpx2.get(
        asgi_server.url + "/", headers={"accept": "text/event-stream"}, timeout=30
    )
    assert response.status_code == 404
    assert f"MCP servers are at {asgi_server.url}/mcp/<slug>" in response.json()["error"]["message"]


def test_a_browser_still_gets_the_page(asgi_server):
    response = httpx2.get(
        asgi_server.url + "/servers/",
        headers={"accept": "text/html"},
        follow_redirects=True,
        timeout=30,
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")


def test_a_form_post_is_left_to_the_page(asgi_server):
    response = httpx2.post(asgi_server.url + "/servers/weather/", data={"a": "b"}, timeout=30)
    assert response.headers["content-type"].startswith("text/html")  # the CSRF refusal


async def test_the_official_python_sdk_shows_the_right_url(asgi_server):
    client = Client(streamable_http_client(asgi_server.url + "/servers/weather/"), mode="legacy")
    with pytest.raises(BaseException) as caught:
        async with client:
            pass
    error = caught.value
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    assert isinstance(error, MCPError)
    assert f"point your MCP client at {asgi_server.url}/mcp/weather" in error.message
