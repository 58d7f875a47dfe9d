"""Output budgets through a live server with the official Python SDK: an oversized result is cut
at a line, marked, and readable whole through the linked resource, page by page, by its caller
only."""

import mcp_types as types
import pytest
from mcp_types import ResourceLink

from accounts.models import ApiKey
from servers.definition import import_definition
from tests.gateway.agents.conftest import STATIC_TOOLS, sdk_client, text_of

LINES = 200
FULL = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(LINES))


@pytest.fixture
def budget_server(committed, tenant, unique):
    def make():
        tools = [dict(tool) for tool in STATIC_TOOLS]
        tools.append({**tools[1], "name": "small_report", "outputBudget": {"maxTokens": 100}})
        definition = {
            "slug": f"budget-{unique}",
            "name": "budget",
            "agents": {"outputBudget": {"maxChars": 2000, "ttlSeconds": 600}},
            "tools": tools,
        }
        server = import_definition(definition, tenant.org)
        _key, other_raw = ApiKey.issue(tenant.org, "another key")
        return server.slug, other_raw

    return committed(make)


async def read_all(client, link_uri: str) -> tuple[str, int]:
    text, uri, pages = "", link_uri, 0
    while uri:
        read = await client.read_resource(uri)
        page = read.contents[0]
        text += page.text
        pages += 1
        uri = (page.meta or {}).get("getmcp/nextPage")
    return text, pages


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_oversized_result_is_cut_at_a_line_and_readable_whole_through_its_link(
    asgi_server, tenant, budget_server, mode
):
    slug, _ = budget_server
    async with sdk_client(asgi_server.mcp_url(slug), tenant.raw, mode) as client:
        result = await client.call_tool("big_report", {"lines": LINES})
        shown = result.content[0].text
        body, _, marker = shown.partition("\n\n[getmcp: result truncated")
        assert len(shown) <= 2000 and marker
        assert FULL.startswith(body) and body.endswith("\n")
        assert f"of {len(FULL):,} characters" in marker
        links = [block for block in result.content if isinstance(block, ResourceLink)]
        assert len(links) == 1 and str(links[0].uri) in marker
        whole, pages = await read_all(client, str(links[0].uri))
        assert whole == FULL
        assert pages == -(-len(FULL) // 2000)


async def test_the_tools_own_budget_and_the_clients_stated_limit_are_smaller_and_win(
    asgi_server, tenant, budget_server
):
    slug, _ = budget_server
    async with sdk_client(asgi_server.mcp_url(slug), tenant.raw) as client:
        own = await client.call_tool("small_report", {"lines": LINES})
        assert len(own.content[0].text) <= 400
        stated = await client.call_tool(
            "big_report", {"lines": LINES}, meta={"getmcp/maxResultChars": 1000}
        )
        assert len(stated.content[0].text) <= 1000
        link = next(block for block in stated.content if isinstance(block, ResourceLink))
        whole, pages = await read_all(client, str(link.uri))
        assert whole == FULL and pages == -(-len(FULL) // 1000)
        small = await client.call_tool("big_report", {"lines": 3})
        assert (
            text_of(small)
            == FULL[: len("line 0: the quick brown fox jumps over the lazy dog\n") * 3]
        )
        assert len(small.content) == 1


async def test_another_key_cannot_read_the_kept_result(asgi_server, tenant, budget_server):
    slug, other_raw = budget_server
    async with sdk_client(asgi_server.mcp_url(slug), tenant.raw) as client:
        result = await client.call_tool("big_report", {"lines": LINES})
        uri = str(next(b for b in result.content if isinstance(b, ResourceLink)).uri)
    async with sdk_client(asgi_server.mcp_url(slug), other_raw) as other:
        with pytest.raises(Exception, match="Resource not found"):
            await other.read_resource(uri)
        with pytest.raises(Exception, match="Resource not found"):
            await other.read_resource(uri.replace("?page=1", "?page=2"))
    async with sdk_client(asgi_server.mcp_url(slug), tenant.raw) as client:
        with pytest.raises(Exception, match="Resource not found"):
            await client.read_resource(uri.split("?")[0] + "x?page=1")
        assert isinstance((await client.read_resource(uri)).contents[0], types.TextResourceContents)
