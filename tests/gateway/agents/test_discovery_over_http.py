"""Progressive discovery through a live server with the official Python SDK: a server of 312
tools lists only the meta-tools (and its pinned tool), search finds the right tool in the top
3, and a call through the meta-tool is validated, logged and rate-limited like a direct one.

Tests that only read the big server and call it share one (`shared_big_server`); the two that
change it or count its logged calls import their own (`big_server`)."""

import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client

from activity.drain import drain_call_log
from activity.models import CallLog
from gateway.agents.discovery import CALL, DESCRIBE, SEARCH
from servers.models import Server
from tests.gateway.agents.conftest import QUERIES, sdk_client, text_of
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import wait_until

META = {SEARCH, DESCRIBE, CALL}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_server_of_300_tools_lists_only_the_meta_tools_and_its_pinned_one(
    asgi_server, shared_big_server, mode
):
    assert shared_big_server.tool_count == 312
    async with sdk_client(
        asgi_server.mcp_url(shared_big_server.slug), shared_big_server.raw, mode
    ) as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == META | {"echo"}
        assert listed.next_cursor is None


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_search_finds_the_right_tool_in_the_top_3_for_natural_queries(
    asgi_server, shared_big_server, mode
):
    async with sdk_client(
        asgi_server.mcp_url(shared_big_server.slug), shared_big_server.raw, mode
    ) as client:
        misses = []
        for query, wanted in QUERIES:
            found = await client.call_tool(SEARCH, {"query": query, "limit": 3})
            names = [tool["name"] for tool in found.structured_content["tools"]]
            if wanted not in names:
                misses.append((query, wanted, names))
            assert wanted in text_of(found) or wanted not in names
        assert misses == []


async def test_describe_answers_one_tools_full_schema(asgi_server, shared_big_server):
    async with sdk_client(
        asgi_server.mcp_url(shared_big_server.slug), shared_big_server.raw
    ) as client:
        described = await client.call_tool(DESCRIBE, {"name": "convertCurrency"})
        tool = described.structured_content["tool"]
        assert tool["name"] == "convertCurrency"
        assert set(tool["inputSchema"]["properties"]) == {"amount", "from_currency", "to_currency"}
        unknown = await client.call_tool(DESCRIBE, {"name": "nope"})
        assert unknown.is_error and "Unknown tool" in text_of(unknown)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_that_asks_for_the_full_list_gets_every_tool(
    asgi_server, shared_big_server, mode
):
    url = asgi_server.mcp_url(shared_big_server.slug)
    async with sdk_client(url, shared_big_server.raw, mode) as client:
        names, cursor = [], None
        while True:
            page = await client.list_tools(
                cursor=cursor, meta={"getmcp/fullList": True}, cache_mode="bypass"
            )
            names += [tool.name for tool in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert len(names) == 312 and not META & set(names)
    async with sdk_client(url + "?tools=all", shared_big_server.raw, mode) as client:
        first = await client.list_tools()
        assert len(first.tools) == 50 and first.next_cursor is not None


async def test_the_legacy_sse_transport_has_discovery_and_the_full_list_by_url(
    asgi_server, shared_big_server
):
    url = asgi_server.mcp_url(shared_big_server.slug) + "/sse"
    headers = {"Authorization": f"Bearer {shared_big_server.raw}"}
    async with Client(sse_client(url, headers=headers), mode="legacy") as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == META | {"echo"}
        called = await client.call_tool(CALL, {"name": "echo", "arguments": {"message": "sse"}})
        assert text_of(called) == "You said sse"
    async with Client(sse_client(url + "?tools=all", headers=headers), mode="legacy") as client:
        listed = await client.list_tools()
        assert len(listed.tools) == 50 and listed.next_cursor is not None


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_meta_call_is_validated_like_a_direct_call(asgi_server, shared_big_server, mode):
    async with sdk_client(
        asgi_server.mcp_url(shared_big_server.slug), shared_big_server.raw, mode
    ) as client:
        called = await client.call_tool(CALL, {"name": "echo", "arguments": {"message": "hi"}})
        assert text_of(called) == "You said hi" and not called.is_error
        invalid = await client.call_tool(CALL, {"name": "echo", "arguments": {"message": 3}})
        direct = await client.call_tool("echo", {"message": 3})
        assert invalid.is_error and text_of(invalid) == text_of(direct)
        assert "Invalid arguments for tool echo" in text_of(invalid)
        with pytest.raises(Exception, match="Unknown tool: nope"):
            await client.call_tool(CALL, {"name": "nope", "arguments": {}})


def test_a_meta_call_is_logged_as_the_call_of_the_tool_it_names(committed, asgi_server, big_server):
    client = RawMcp(asgi_server.mcp_url(big_server.slug), key=big_server.raw)
    client.initialize()
    client.call(
        "tools/call", {"name": CALL, "arguments": {"name": "echo", "arguments": {"message": "x"}}}
    )
    client.call("tools/call", {"name": CALL, "arguments": {"name": "echo", "arguments": {}}})

    def rows():
        drain_call_log()
        return list(
            CallLog.objects.filter(server_id=big_server.server.pk, method="tools/call").order_by(
                "at"
            )
        )

    def both_logged():
        found = committed(rows)
        return found if len(found) >= 2 else None

    logged = wait_until(both_logged, interval=0.3, what="both calls in the call log")
    assert [(row.tool, row.outcome) for row in logged] == [("echo", "ok"), ("echo", "tool_error")]


def test_meta_calls_count_against_the_rate_limit_like_direct_calls(
    committed, asgi_server, big_server
):
    def limit():
        server = Server.objects.get(pk=big_server.server.pk)
        server.rate_limit_per_minute = 4
        server.save()  # bumps the generation: the live server sees it at once

    committed(limit)
    client = RawMcp(asgi_server.mcp_url(big_server.slug), key=big_server.raw)
    client.initialize()  # initialize and notifications/initialized: two of the four
    params = {"name": CALL, "arguments": {"name": "echo", "arguments": {"message": "again"}}}
    direct = {"name": "echo", "arguments": {"message": "direct"}}
    statuses = [
        client.request("tools/call", params)[0].status_code,
        client.request("tools/call", direct)[0].status_code,
        client.request("tools/call", params)[0].status_code,
    ]
    assert statuses == [200, 200, 429]


def test_a_key_of_another_server_cannot_call_through_the_meta_tool(
    committed, asgi_server, shared_big_server
):
    from accounts.models import ApiKey
    from servers.definition import import_definition

    def other_key():
        other = import_definition(
            {"slug": f"{shared_big_server.slug}-x", "name": "x"}, shared_big_server.org
        )
        return ApiKey.issue(shared_big_server.org, "other server only", servers=[other])[1]

    raw = committed(other_key)
    response = httpx2.post(
        asgi_server.mcp_url(shared_big_server.slug),
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": CALL, "arguments": {"name": "echo", "arguments": {"message": "x"}}},
        },
        headers={"Authorization": f"Bearer {raw}", "Accept": "application/json"},
        timeout=10,
    )
    assert response.status_code == 403
