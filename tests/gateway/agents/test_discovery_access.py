"""Progressive discovery respects per-tool access: a key limited to some tools of a big server
searches, describes and calls through the meta-tools only what it may use, and an unlimited key
of the same server, searching afterwards, still finds every tool (each principal's view has its
own search index)."""

import pytest
from mcp.shared.exceptions import MCPError

from accounts.models import ApiKey
from gateway.agents.discovery import CALL, DESCRIBE, SEARCH
from tests.gateway.agents.conftest import sdk_client, text_of

ALLOWED = ["echo", "convertCurrency"]


@pytest.fixture
def limited_key(committed, big_server) -> str:
    def make():
        key, raw = ApiKey.issue(big_server.org, "limited agents key")
        key.access = {str(big_server.server.pk): {"tools": ALLOWED}}
        key.save()
        return raw

    return committed(make)


async def test_a_limited_key_searches_describes_and_calls_only_the_tools_it_may_use(
    asgi_server, big_server, limited_key
):
    raw = limited_key
    url = asgi_server.mcp_url(big_server.slug)
    async with sdk_client(url, raw) as client:
        # The query names a withheld tool best; it must not come back, nor be described or called.
        found = await client.call_tool(SEARCH, {"query": "cancel my order", "limit": 10})
        names = [tool["name"] for tool in found.structured_content.get("tools", [])]
        assert set(names) <= set(ALLOWED)
        assert "cancelOrder" not in text_of(found)
        withheld = await client.call_tool(DESCRIBE, {"name": "cancelOrder"})
        assert withheld.is_error and "Unknown tool" in text_of(withheld)
        # The same JSON-RPC error a direct call of a withheld (or missing) tool gets.
        with pytest.raises(MCPError, match="Unknown tool: cancelOrder"):
            await client.call_tool(CALL, {"name": "cancelOrder", "arguments": {}})
        described = await client.call_tool(DESCRIBE, {"name": "convertCurrency"})
        assert described.structured_content["tool"]["name"] == "convertCurrency"

    # The unlimited key's search ranks over all 312 tools, not over the limited key's two.
    async with sdk_client(url, big_server.raw) as client:
        found = await client.call_tool(SEARCH, {"query": "cancel my order", "limit": 3})
        assert "cancelOrder" in [t["name"] for t in found.structured_content["tools"]]
