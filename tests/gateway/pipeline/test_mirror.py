"""The state mirror (gateway/pipeline/mirror.py) on this test's event loop and the real Redis:
a server or key used within MCP_STATE_KEEP_SECONDS stays fresh in the background however rarely
it is called, a change made behind the platform's back still reaches it within the bound, and
each kind holds at most MCP_STATE_MIRROR_SIZE entries, the least recently used dropped first.

The bound is shortened (0.3 s) so that "idle for several bounds" takes a second; requests go
through the real ASGI application, as in test_hot_path.py."""

import asyncio
import time

import httpx2
import pytest

from gateway.pipeline.credentials import digest, generation_digest
from gateway.pipeline.mirror import Mirror, mirror
from gateway.pipeline.state_read import read_kept
from getmcp.asgi import application
from infra import keys as rkeys
from infra.redis import async_client, sync_client
from tests.gateway.endpoint.test_hot_path import redis_commands_of_this_task
from tests.waiting import wait_until_async

BOUND = 0.3
# A loaded CI box on top of the bound.
SLACK = 2.0
STATELESS = "2026-07-28"


@pytest.fixture
def short_bound(settings):
    settings.MCP_STATE_MAX_STALE_SECONDS = BOUND
    settings.MCP_STATE_KEEP_SECONDS = 60
    return settings


async def _subscribed(found: Mirror) -> Mirror:
    """The mirror once its subscriber listens (before that, nothing read is kept)."""
    await wait_until_async(
        found.live, interval=0.02, what="the state mirror's subscriber to listen"
    )
    return found


def _stateless_call(tenant) -> tuple[dict, dict]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "mirror", "version": "1"},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "idle"}, "_meta": meta},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {tenant.raw}",
        "host": "localhost",
        "mcp-protocol-version": STATELESS,
        "mcp-method": "tools/call",
        "mcp-name": "echo",
    }
    return body, headers


async def test_a_server_idle_for_several_bounds_is_still_called_without_reading_redis(
    tenant, short_bound, django_db_blocker
):
    body, headers = _stateless_call(tenant)
    transport = httpx2.ASGITransport(app=application)
    with django_db_blocker.unblock():
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            url = f"/mcp/{tenant.slug}"
            await _subscribed(mirror())
            for _ in range(2):  # the first call reads the key from Postgres, the second its
                # generation from Redis (the key's digest is known only from then on)
                first = await http.post(url, json=body, headers=headers)
                assert first.json()["result"]["content"][0]["text"] == "You said idle"

            # Deliberate: idle time is the subject (no call meanwhile: only the refresher reads).
            await asyncio.sleep(4 * BOUND)
            # Only the refresher can have kept both entries trusted through that idle time; on
            # a loaded box its pass may come late, so the call waits for it (within the slack).
            key_digest = generation_digest(digest(tenant.raw))
            await wait_until_async(
                lambda: mirror().lookup(tenant.slug, key_digest, None) is not None,
                timeout=SLACK,
                interval=0.01,
                what="the refresher to renew the idle entries",
            )
            with redis_commands_of_this_task() as sent:
                again = await http.post(url, json=body, headers=headers)
            assert again.json()["result"]["content"][0]["text"] == "You said idle"
            assert sent == []


async def test_a_change_nobody_announced_reaches_an_idle_server_within_the_bound(short_bound):
    found = await _subscribed(mirror())
    slug = "mirror-idle"
    redis = sync_client()
    redis.set(rkeys.server_generation(slug), 7)
    state = await found.read(async_client(), slug, None, None)
    assert state.server_generation == "7"

    await asyncio.sleep(4 * BOUND)  # deliberate: the server has been idle for several bounds
    redis.incr(rkeys.server_generation(slug))  # no PUBLISH: only the re-read can notice it

    def reached() -> bool:
        state = found.lookup(slug, None, None)
        assert state is None or state.server_generation in ("7", "8")
        return state is not None and state.server_generation == "8"

    await wait_until_async(
        reached, timeout=BOUND + SLACK, interval=0.02, what="the change to reach the mirror"
    )


async def test_each_kind_keeps_at_most_its_size_dropping_the_least_recently_used(
    short_bound,
):
    short_bound.MCP_STATE_MIRROR_SIZE = 3
    # Only the order counts here: a bound long enough that no entry ages out (nor is re-read)
    # between these reads on a loaded machine.
    short_bound.MCP_STATE_MAX_STALE_SECONDS = 30
    found = await _subscribed(Mirror())
    redis = async_client()

    async def kept(slug: str) -> None:
        # A read that overlaps any announcement is not kept (the mirror cannot tell whether it
        # is older than the change), and pub/sub is shared by every Redis database, so another
        # test worker's announcements can land here: read again until one is kept.
        for _ in range(50):
            await found.read(redis, slug, f"digest-{slug}", None)
            if slug in found.servers:
                return
        raise AssertionError(f"{slug} was never kept")

    for slug in ("lru-a", "lru-b", "lru-c"):
        await kept(slug)
    assert found.lookup("lru-a", "digest-lru-a", None) is not None  # now the most recent

    await kept("lru-d")
    assert list(found.servers) == ["lru-c", "lru-a", "lru-d"]
    assert list(found.keys) == ["digest-lru-c", "digest-lru-a", "digest-lru-d"]


async def test_servers_and_keys_unused_for_the_keep_window_are_dropped_and_the_rest_reread(
    short_bound,
):
    found = await _subscribed(Mirror())
    redis = async_client()
    sync_client().set(rkeys.server_generation("kept"), 3)
    await found.read(redis, "kept", "digest-kept", None)
    await found.read(redis, "unused", "digest-unused", None)
    long_ago = time.monotonic() - short_bound.MCP_STATE_KEEP_SECONDS - 1
    found.servers["unused"].used = found.keys["digest-unused"].used = long_ago
    found.servers.move_to_end("kept")
    found.keys.move_to_end("digest-kept")
    sync_client().set(rkeys.server_generation("kept"), 4)
    before = found.servers["kept"].verified

    await found.refresh()
    assert list(found.servers) == ["kept"]
    assert list(found.keys) == ["digest-kept"]
    assert found.servers["kept"].value == ("4", False)
    assert found.servers["kept"].verified > before


async def test_the_refreshers_read_answers_in_the_order_asked_with_absent_keys_as_defaults():
    redis = sync_client()
    redis.set(rkeys.server_generation("read-one"), 5)
    redis.set(rkeys.key_generation("digest-one"), 2)
    redis.set(rkeys.inspector_watched("read-two"), b"1")
    slugs, digests = ["read-one", "read-two"], ["digest-none", "digest-one"]

    assert await read_kept(async_client(), slugs, digests) == (
        ["5", None],
        [False, True],
        ["0", "2"],
    )
    assert await read_kept(async_client(), [], digests) == ([], [], ["0", "2"])
    assert await read_kept(async_client(), slugs, []) == (["5", None], [False, True], [])
