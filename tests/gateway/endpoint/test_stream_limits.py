"""The stream limits module on its own: leases, lapses, and giving slots back."""

import time
from types import SimpleNamespace

import pytest

from gateway.endpoint import stream_limits
from gateway.endpoint.gate import Refused
from infra.redis import async_client


def gate_for(redis, *, key_id=7, address="10.0.0.9"):
    ident = "anon" if key_id is None else f"key:{key_id}"
    return SimpleNamespace(
        redis=redis,
        snapshot=SimpleNamespace(server_id=41),
        credential=SimpleNamespace(ident=ident),
        request=SimpleNamespace(scope={"client": (address, 5000)}),
    )


@pytest.fixture
async def redis(settings):
    settings.MCP_STREAMS_PER_SESSION = 2
    settings.MCP_STREAMS_PER_KEY = 3
    settings.MCP_STREAMS_PER_PROCESS = 100
    client = async_client()
    for key in await client.keys("mcp:streams:*"):
        await client.delete(key)
    yield client
    for key in await client.keys("mcp:streams:*"):
        await client.delete(key)


async def test_a_session_over_its_limit_is_refused_and_a_closed_stream_frees_its_slot(redis):
    gate = gate_for(redis)
    async with stream_limits.open_stream(gate, session_id="s1"):
        async with stream_limits.open_stream(gate, session_id="s1"):
            with pytest.raises(Refused) as refused:
                async with stream_limits.open_stream(gate, session_id="s1"):
                    pass
        async with stream_limits.open_stream(gate, session_id="s1"):
            pass
    assert refused.value.status == 429
    assert ("retry-after", "5") in refused.value.headers
    assert await redis.zcard(stream_limits.session_key("s1")) == 0
    assert stream_limits.open_in_process() == 0


async def test_the_slot_of_a_process_that_died_lapses(redis):
    gate = gate_for(redis)
    key = stream_limits.caller_key(41, "key:7")
    # Three leases left by a process killed long ago.
    await redis.zadd(key, {"dead-1": time.time() - 1, "dead-2": time.time() - 1, "x": 0})
    async with stream_limits.open_stream(gate):
        assert await redis.zcard(key) == 1


async def test_anonymous_callers_are_counted_by_address(redis):
    one, other = gate_for(redis, key_id=None), gate_for(redis, key_id=None, address="10.0.0.10")
    async with (
        stream_limits.open_stream(one),
        stream_limits.open_stream(one),
        stream_limits.open_stream(one),
    ):
        with pytest.raises(Refused):
            async with stream_limits.open_stream(one):
                pass
        async with stream_limits.open_stream(other):
            pass


async def test_a_lease_is_renewed_while_its_stream_runs(redis, settings):
    settings.MCP_SSE_KEEPALIVE_SECONDS = 1
    gate = gate_for(redis)
    key = stream_limits.caller_key(41, "key:7")
    async with stream_limits.open_stream(gate) as slot:
        ((lease, first),) = await redis.zrange(key, 0, -1, withscores=True)
        slot.renewed -= stream_limits.lease_seconds()  # as if a third of the lease had passed
        await slot.renew_if_due()
        ((_, second),) = await redis.zrange(key, 0, -1, withscores=True)
    assert second > first
