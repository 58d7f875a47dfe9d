"""The code-mode meta-tool through the official Python SDK on a live server: a job of three
steps in one call, each inner call logged like a direct one; an inner call the key may not make
and one over the key's limit are refused inside the program; a runaway program stops at the
sandbox's limits; servers that did not turn code mode on (or list every tool) do not offer it."""

import time

import pytest

from activity.drain import drain_call_log
from activity.models import CallLog
from gateway.agents.codemode import RUN
from gateway.agents.discovery import CALL, DESCRIBE, SEARCH
from tests.gateway.agents.conftest import sdk_client, text_of
from tests.waiting import wait_until

from .codemode_servers import JOB, JOB_RESULT, issue_key, make_shop, member_key


@pytest.fixture
def shop(committed, unique):
    return make_shop(committed, f"shop-{unique}")


@pytest.fixture(params=["key", "role"])
def narrowed_key(request, committed, shop):
    """A key narrowed to two tools of the shop: by its own access list, or by its maker's role."""
    allowed = ["list_orders", "send_email"]
    if request.param == "key":
        return issue_key(committed, shop, access={"tools": allowed})
    return member_key(committed, shop, role_tools=allowed)


@pytest.fixture
def limited_key(committed, shop):
    return issue_key(committed, shop, limits={"tools": {"get_customer": 2}})


@pytest.fixture
def tight_shop(committed, unique):
    return make_shop(committed, f"shop-tight-{unique}", limits={"cpuSeconds": 1, "memoryMb": 16})


@pytest.fixture
def shops_without_code_mode(committed, unique):
    return [
        make_shop(committed, f"shop-off-{unique}", code_mode=None),
        make_shop(committed, f"shop-all-{unique}", discovery="off"),
    ]


@pytest.fixture
def inside_one_minute():
    # Every call of a per-minute test must fall in one window.
    # Deliberate: the live server's windows follow the wall clock, which no test can move.
    if time.time() % 60 > 45:
        time.sleep(61 - time.time() % 60)


def logged_calls(committed, server_id: int, count: int) -> list[tuple[str, str]]:
    def rows():
        drain_call_log()
        return [
            (row.tool, row.outcome)
            for row in CallLog.objects.filter(server_id=server_id, method="tools/call").order_by(
                "at", "id"
            )
        ]

    def all_logged():
        found = committed(rows)
        return found if len(found) >= count else None

    return wait_until(all_logged, interval=0.3, what=f"{count} calls in the call log")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_three_step_job_runs_in_one_call_of_the_meta_tool(asgi_server, shop, mode):
    async with sdk_client(asgi_server.mcp_url(shop.slug), shop.raw, mode) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert listed == [SEARCH, DESCRIBE, CALL, RUN]
        result = await client.call_tool(RUN, {"code": JOB})
    assert not result.is_error, text_of(result)
    assert result.structured_content == JOB_RESULT


def test_each_inner_call_is_in_the_call_log_as_the_callers_own(committed, asgi_server, shop):
    import asyncio

    async def job():
        async with sdk_client(asgi_server.mcp_url(shop.slug), shop.raw) as client:
            return await client.call_tool(RUN, {"code": JOB})

    assert asyncio.run(job()).structured_content == JOB_RESULT
    logged = logged_calls(committed, shop.server.pk, 4)
    # The inner calls as they ran, then the meta-call that made them (logged when answered).
    assert logged == [
        ("list_orders", "ok"),
        ("get_customer", "ok"),
        ("send_email", "ok"),
        (RUN, "ok"),
    ]


async def test_an_inner_call_the_callers_key_or_role_may_not_make_is_refused_like_a_direct_one(
    asgi_server, shop, narrowed_key
):
    raw = narrowed_key
    program = (
        "async def main():\n"
        "    try:\n"
        "        await call_tool('get_customer', {'id': 'c-7'})\n"
        "    except ValueError as error:\n"
        "        return str(error)\n"
    )
    async with sdk_client(asgi_server.mcp_url(shop.slug), raw) as client:
        refused = await client.call_tool(RUN, {"code": program})
        assert text_of(refused) == "call_tool('get_customer'): Unknown tool: get_customer"
        # Uncaught, the refusal ends the program with the line that made it.
        uncaught = await client.call_tool(RUN, {"code": JOB})
    assert uncaught.is_error
    assert "line 6" in text_of(uncaught)
    assert "ValueError: call_tool('get_customer'): Unknown tool: get_customer" in text_of(uncaught)


@pytest.mark.usefixtures("inside_one_minute")
async def test_an_inner_call_over_the_keys_limit_raises_in_the_program(
    asgi_server, shop, limited_key
):
    raw = limited_key
    program = (
        "async def main():\n"
        "    names = []\n"
        "    for customer_id in ['c-3', 'c-7', 'c-9']:\n"
        "        try:\n"
        "            customer = await call_tool('get_customer', {'id': customer_id})\n"
        "        except RuntimeError as error:\n"
        "            return {'names': names, 'stopped': str(error)}\n"
        "        names.append(customer['structuredContent']['name'])\n"
        "    return {'names': names}\n"
    )
    async with sdk_client(asgi_server.mcp_url(shop.slug), raw) as client:
        result = await client.call_tool(RUN, {"code": program})
        assert result.structured_content["names"] == ["Ada Byron", "Grace Hopper"]
        assert result.structured_content["stopped"].startswith(
            "call_tool('get_customer'): Over the limit of 2 calls per minute of get_customer"
        )
        # The limit is the key's, whichever way it calls: a direct call is refused too.
        with pytest.raises(Exception, match="limit of 2 calls per minute of get_customer"):
            await client.call_tool("get_customer", {"id": "c-3"})


async def test_an_inner_call_with_invalid_arguments_is_a_tool_error_the_program_sees(
    asgi_server, shop
):
    program = (
        "async def main():\n"
        "    r = await call_tool('get_customer', {'id': 7})\n"
        "    return {'isError': r.get('isError', False), 'text': r['content'][0]['text']}\n"
    )
    async with sdk_client(asgi_server.mcp_url(shop.slug), shop.raw) as client:
        result = await client.call_tool(RUN, {"code": program})
        direct = await client.call_tool(CALL, {"name": "get_customer", "arguments": {"id": 7}})
    assert result.structured_content == {"isError": True, "text": text_of(direct)}


async def test_a_runaway_program_stops_at_the_sandboxs_limits(asgi_server, tight_shop):
    shop = tight_shop
    spin = "async def main():\n    while True:\n        pass\n"
    bomb = "async def main():\n    xs = []\n    while True:\n        xs.append('x' * 100000)\n"
    forbidden = "async def main():\n    return await fetch('http://127.0.0.1/')\n"
    async with sdk_client(asgi_server.mcp_url(shop.slug), shop.raw) as client:
        spun = await client.call_tool(RUN, {"code": spin})
        bombed = await client.call_tool(RUN, {"code": bomb})
        fetched = await client.call_tool(RUN, {"code": forbidden})
        after = await client.call_tool(RUN, {"code": "async def main():\n    return 'fine'\n"})
    assert spun.is_error and text_of(spun) == (
        "The program was stopped: CPU time limit exceeded (1 s)."
    )
    assert bombed.is_error and text_of(bombed) == (
        "The program was stopped: memory limit exceeded (16 MB)."
    )
    assert fetched.is_error and "PermissionError: fetch is not available" in text_of(fetched)
    assert text_of(after) == "fine"


async def test_only_a_server_in_discovery_mode_with_code_mode_on_offers_it(
    asgi_server, shops_without_code_mode
):
    for server in shops_without_code_mode:
        async with sdk_client(asgi_server.mcp_url(server.slug), server.raw) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert RUN not in names
            with pytest.raises(Exception, match=f"Unknown tool: {RUN}"):
                await client.call_tool(RUN, {"code": JOB})
