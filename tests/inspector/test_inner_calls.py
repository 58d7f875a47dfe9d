"""The live inspector shows the calls a code-mode program makes: one event per inner call, as the
direct call it stands for (method, tool, outcome, a withheld tool's reason), marked with the
meta-call that made it, besides the meta-call's own event."""

import asyncio

import pytest

from gateway.agents.codemode import RUN
from tests.gateway.agents.codemode_servers import JOB, issue_key, make_shop
from tests.gateway.endpoint.mcp_http import RawMcp

from .conftest import watching


@pytest.fixture
def shop(committed, unique):
    return make_shop(committed, f"shop-watch-{unique}")


@pytest.fixture
def shop_cookie(shop, session_of):
    return session_of(shop.user)


@pytest.fixture
def narrow_key(committed, shop):
    return issue_key(committed, shop, access={"tools": ["list_orders", "send_email"]})


def run_program(server, shop, raw: str, code: str) -> dict:
    client = RawMcp(server.mcp_url(shop.slug), key=raw)
    client.http.timeout = 60
    client.initialize()
    return client.call("tools/call", {"name": RUN, "arguments": {"code": code}})["result"]


async def test_each_inner_call_of_a_program_is_an_event_of_its_own(asgi_server, shop, shop_cookie):
    async with watching(asgi_server, shop.slug, shop_cookie) as watch:
        result = await asyncio.to_thread(run_program, asgi_server, shop, shop.raw, JOB)
        assert not result.get("isError")
        inner = [await watch.event(lambda e: e.get("via") == RUN, timeout=10) for _ in range(3)]
        outer = await watch.event(lambda e: e["target"] == RUN, timeout=10)
    # Events leave as each is built (in the background), so they are put back in call order.
    inner.sort(key=lambda event: event["at"])
    assert [(e["method"], e["target"], e["outcome"]) for e in inner] == [
        ("tools/call", "list_orders", "ok"),
        ("tools/call", "get_customer", "ok"),
        ("tools/call", "send_email", "ok"),
    ]
    # Arguments are hidden as for any call (the server does not log them).
    assert inner[1]["request"]["body"]["params"]["arguments"] == {"id": "[redacted]"}
    assert inner[0]["at"] < inner[1]["at"] < inner[2]["at"]
    assert outer["method"] == "tools/call" and outer["outcome"] == "ok"
    assert "via" not in outer


async def test_an_inner_call_withheld_from_the_key_shows_why_to_the_owner(
    asgi_server, shop, shop_cookie, narrow_key
):
    async with watching(asgi_server, shop.slug, shop_cookie) as watch:
        result = await asyncio.to_thread(run_program, asgi_server, shop, narrow_key, JOB)
        assert result["isError"]
        refused = await watch.event(
            lambda e: e.get("via") == RUN and e["target"] == "get_customer", timeout=10
        )
    assert refused["outcome"] == "refused"
    assert refused["reason"] == "tool_access_refused"
