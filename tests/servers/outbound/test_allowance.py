"""A refusal says who can open the way and how: through the guard directly, and through a real
MCP call of an http tool on a live server, refused by default and served with the loopback
switch that `make run` sets for local development."""

import pytest

from accounts.models import ApiKey, User
from servers.definition import import_definition
from servers.outbound import BlockedDestination, guarded_request
from tests.conftest import LiveServer
from tests.gateway.endpoint.mcp_http import RawMcp


async def test_a_refused_loopback_address_says_how_the_operator_allows_it(
    httpserver, closed_allow_list
):
    httpserver.expect_request("/").respond_with_data("secret internal page")
    with pytest.raises(BlockedDestination) as refused:
        await guarded_request("GET", httpserver.url_for("/"))
    message = refused.value.message
    assert message.startswith("Requests to 127.0.0.1 are not allowed: it is a loopback address.")
    assert "add 127.0.0.0/8 to OUTBOUND_ALLOWED_NETWORKS" in message
    assert "restart" in message
    assert "/admin/vault/networkallowance/" in message
    assert "OUTBOUND_ALLOW_LOOPBACK=true" in message
    assert httpserver.log == []


async def test_a_refused_private_address_suggests_that_address_alone(fake_dns, closed_allow_list):
    fake_dns.table["intranet.test"] = ["10.1.2.3"]
    with pytest.raises(BlockedDestination) as refused:
        await guarded_request("GET", "http://intranet.test/", timeout=2)
    message = refused.value.message
    assert "intranet.test (10.1.2.3)" in message and "a private address" in message
    assert "add 10.1.2.3/32 to OUTBOUND_ALLOWED_NETWORKS" in message
    assert "OUTBOUND_ALLOW_LOOPBACK" not in message


async def test_a_cloud_metadata_refusal_offers_no_way_round_it(closed_allow_list):
    with pytest.raises(BlockedDestination) as refused:
        await guarded_request("GET", "http://169.254.169.254/latest/meta-data/", timeout=2)
    assert "OUTBOUND_ALLOWED_NETWORKS" not in refused.value.message


async def test_the_loopback_switch_opens_loopback_and_no_private_network(
    httpserver, fake_dns, closed_allow_list, settings
):
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    httpserver.expect_request("/hello").respond_with_data("hi", content_type="text/plain")
    response = await guarded_request("GET", httpserver.url_for("/hello"))
    assert response.text == "hi"
    fake_dns.table["intranet.test"] = ["192.168.1.20"]
    with pytest.raises(BlockedDestination, match="a private address"):
        await guarded_request("GET", "http://intranet.test/", timeout=2)


# -- through a real MCP call ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def loopback_switch_server(live_database):
    """A live server started as `make run` on loopback starts it: OUTBOUND_ALLOW_LOOPBACK=true."""
    server = LiveServer(live_database, extra_env={"OUTBOUND_ALLOW_LOOPBACK": "true"})
    yield server
    server.stop()


@pytest.fixture
def local_upstream_tool(committed, unique, httpserver):
    """A server with an http tool that calls an upstream on this machine, and a key for it."""
    httpserver.expect_request("/weather").respond_with_json({"sky": "clear"})

    def make():
        user = User.objects.create_user(f"local-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        definition = {
            "slug": f"local-{unique}",
            "name": "local upstream",
            "tools": [
                {
                    "name": "weather",
                    "description": "The weather from a service on this machine.",
                    "inputSchema": {"type": "object", "properties": {}},
                    "kind": "http",
                    "config": {"method": "GET", "url": httpserver.url_for("/weather")},
                }
            ],
        }
        server = import_definition(definition, org)
        _key, raw = ApiKey.issue(org, "local key")
        return server.slug, raw

    return committed(make)


def call_weather(live, slug: str, raw: str) -> dict:
    client = RawMcp(live.mcp_url(slug), key=raw)
    try:
        client.initialize()
        return client.call("tools/call", {"name": "weather", "arguments": {}})
    finally:
        client.http.close()


def test_a_tool_calling_loopback_is_refused_with_how_to_allow_it_over_mcp(
    asgi_server, local_upstream_tool, httpserver
):
    slug, raw = local_upstream_tool
    result = call_weather(asgi_server, slug, raw)["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "127.0.0.1 are not allowed: it is a loopback address" in text
    assert "OUTBOUND_ALLOWED_NETWORKS" in text and "OUTBOUND_ALLOW_LOOPBACK=true" in text
    assert httpserver.log == []


def test_with_the_loopback_switch_the_same_call_reaches_the_upstream(
    loopback_switch_server, local_upstream_tool, httpserver
):
    slug, raw = local_upstream_tool
    result = call_weather(loopback_switch_server, slug, raw)["result"]
    assert not result.get("isError"), result
    assert "clear" in result["content"][0]["text"]
    assert len(httpserver.log) == 1


@pytest.fixture(scope="module")
def local_mcp_upstream():
    """A real MCP server (the official SDK) on this machine's loopback."""
    from tests.servers.upstream.fixtures import UpstreamProcess

    process = UpstreamProcess()
    yield process
    process.stop()


@pytest.fixture
def relaying_server(committed, unique, local_mcp_upstream):
    def make():
        user = User.objects.create_user(f"relay-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        definition = {
            "slug": f"relay-{unique}",
            "name": "relays a local MCP server",
            "tools": [
                {
                    "name": "add",
                    "description": "Adds, on an MCP server on this machine.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    },
                    "kind": "upstream",
                    "config": {"url": local_mcp_upstream.url, "tool": "add"},
                }
            ],
        }
        server = import_definition(definition, org)
        _key, raw = ApiKey.issue(org, "relay key")
        return server.slug, raw

    return committed(make)


def call_add(live, slug: str, raw: str) -> dict:
    client = RawMcp(live.mcp_url(slug), key=raw)
    try:
        client.initialize()
        return client.call("tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})
    finally:
        client.http.close()


def test_an_upstream_mcp_server_on_loopback_is_refused_then_relayed_with_the_switch(
    asgi_server, loopback_switch_server, relaying_server
):
    slug, raw = relaying_server
    refused = call_add(asgi_server, slug, raw)
    text = str(refused.get("error") or refused["result"])
    assert "a loopback address" in text and "OUTBOUND_ALLOW_LOOPBACK=true" in text
    relayed = call_add(loopback_switch_server, slug, raw)["result"]
    assert not relayed.get("isError"), relayed
    assert "42" in relayed["content"][0]["text"]
