"""Open streams are bounded per session, per key and per process, refused with a JSON-RPC error
and Retry-After; and they share the process's one Redis reader instead of holding a connection
each. Against a live server on a private Redis, whose CLIENT LIST only this test's processes use."""

import asyncio
import json
import time
from contextlib import AsyncExitStack

import httpx2

from infra import keys as rkeys
from infra import session_streams
from tests.waiting import wait_until_async

from .harness import seed_tenant, wait_until

SESSION_ERA = "2025-11-25"


def headers(key: str, sid: str | None = None) -> dict:
    values = {
        "authorization": f"Bearer {key}",
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": SESSION_ERA,
    }
    if sid:
        values["mcp-session-id"] = sid
    return values


async def open_session(client: httpx2.AsyncClient, url: str, key: str) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": SESSION_ERA,
            "capabilities": {},
            "clientInfo": {"name": "streams", "version": "0"},
        },
    }
    response = await client.post(url, json=init, headers=headers(key))
    assert response.status_code == 200, response.text
    sid = response.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await client.post(url, json=note, headers=headers(key, sid))
    return sid


async def open_streams(stack, client, url, key, sid, count) -> list[httpx2.Response]:
    """Open `count` GET streams at once; each is left open (stack closes them)."""
    get_headers = {**headers(key, sid), "accept": "text/event-stream"}

    async def one():
        return await stack.enter_async_context(client.stream("GET", url, headers=get_headers))

    return list(await asyncio.gather(*(one() for _ in range(count))))


def redis_clients(fault_redis) -> int:
    return len(fault_redis.client().client_list())


IDLE_KEPT = 4


def tenant_server(fault_database, fault_redis, start_server, **limits):
    tenant = seed_tenant(database_url=fault_database, redis_url=fault_redis.url())
    env = {f"MCP_STREAMS_PER_{name.upper()}": str(value) for name, value in limits.items()}
    env["REDIS_POOL_MAX_IDLE"] = str(IDLE_KEPT)
    server = start_server(database_url=fault_database, redis_url=fault_redis.url(), extra_env=env)
    return tenant, server, f"{server.url}/mcp/{tenant['slug']}"


def test_open_streams_share_one_redis_reader_and_each_gets_every_event(
    fault_database, fault_redis, start_server
):
    tenant, server, url = tenant_server(
        fault_database, fault_redis, start_server, session=500, key=500, process=500
    )

    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}

    async def read_until_event(response) -> dict:
        buffer = ""
        async for chunk in response.aiter_text():
            buffer += chunk
            for block in buffer.split("\n\n"):
                data = [line[5:].strip() for line in block.split("\n") if line.startswith("data:")]
                if data and data[0]:
                    return json.loads(data[0])
        raise AssertionError("the stream ended without the event")

    async def scenario():
        async with httpx2.AsyncClient(timeout=30, limits=httpx2.Limits(max_connections=None)) as c:
            sid = await open_session(c, url, tenant["key"])
            before = redis_clients(fault_redis)
            async with AsyncExitStack() as stack:
                streams = await open_streams(stack, c, url, tenant["key"], sid, 200)
                assert {s.status_code for s in streams} == {200}
                # The burst of 200 requests settles back to the pool's idle connections.
                wait_until(
                    lambda: redis_clients(fault_redis) <= before + IDLE_KEPT + 1,
                    timeout=10,
                    what="Redis clients to settle with 200 streams open",
                )
                during = redis_clients(fault_redis)
                # One event on the session's GET stream reaches every open stream at once.
                pipe = fault_redis.client().pipeline(transaction=False)
                session_streams.append(
                    pipe, sid, "get", {"d": json.dumps(note)}, maxlen=1000, ttl_seconds=600
                )
                pipe.execute()
                sent = time.monotonic()
                received = await asyncio.wait_for(
                    asyncio.gather(*(read_until_event(s) for s in streams)), 10
                )
                spread = time.monotonic() - sent
            return before, during, received, spread

    before, during, received, seconds = asyncio.run(scenario())
    print(f"\nRedis clients: {before} before, {during} with 200 streams open")
    print(f"one event reached all 200 streams within {seconds:.2f}s")
    # One subscriber for every stream, plus the pool's idle connections: not one per stream.
    assert during <= before + IDLE_KEPT + 1
    assert received == [note] * 200


def test_the_keep_alives_of_many_streams_ask_redis_together_and_a_session_end_closes_them_all(
    fault_database, fault_redis, start_server
):
    tenant = seed_tenant(database_url=fault_database, redis_url=fault_redis.url())
    env = {
        "MCP_STREAMS_PER_SESSION": "500",
        "MCP_STREAMS_PER_KEY": "500",
        "REDIS_POOL_MAX_IDLE": str(IDLE_KEPT),
        "MCP_SSE_KEEPALIVE_SECONDS": "0.5",
    }
    server = start_server(database_url=fault_database, redis_url=fault_redis.url(), extra_env=env)
    url = f"{server.url}/mcp/{tenant['slug']}"

    async def count_keep_alives(response, counts: list[int], index: int) -> None:
        async for chunk in response.aiter_text():
            counts[index] += chunk.count(": keep-alive")

    async def scenario():
        async with httpx2.AsyncClient(timeout=30, limits=httpx2.Limits(max_connections=None)) as c:
            sid = await open_session(c, url, tenant["key"])
            before = redis_clients(fault_redis)
            async with AsyncExitStack() as stack:
                streams = await open_streams(stack, c, url, tenant["key"], sid, 100)
                assert {s.status_code for s in streams} == {200}
                counts = [0] * len(streams)
                readers = [
                    asyncio.ensure_future(count_keep_alives(s, counts, n))
                    for n, s in enumerate(streams)
                ]
                # Four keep-alive periods: 100 streams check their session each period. Had
                # each asked on a connection of its own, the pool would grow by the burst.
                most = 0
                for _ in range(20):
                    # Deliberate: a sample every 0.1 s over a fixed span (nothing is awaited;
                    # the pool's size is watched while the streams check their session).
                    await asyncio.sleep(0.1)
                    most = max(most, await asyncio.to_thread(redis_clients, fault_redis))
                fault_redis.client().delete(rkeys.session(sid))
                ended = await asyncio.wait_for(asyncio.gather(*readers), 5)
            return before, most, counts, ended

    before, most, counts, ended = asyncio.run(scenario())
    assert most <= before + IDLE_KEPT + 2
    # Every stream had its turns (a keep-alive comment each period), and all ended with it.
    assert min(counts) >= 2, counts
    assert len(ended) == 100


def test_a_stream_over_the_session_limit_is_refused_with_a_json_rpc_error(
    fault_database, fault_redis, start_server
):
    tenant, server, url = tenant_server(
        fault_database, fault_redis, start_server, session=3, key=100, process=100
    )

    async def scenario():
        async with httpx2.AsyncClient(timeout=30) as c:
            sid = await open_session(c, url, tenant["key"])
            async with AsyncExitStack() as stack:
                opened = await open_streams(stack, c, url, tenant["key"], sid, 3)
                assert [s.status_code for s in opened] == [200, 200, 200]
                refused = await c.get(
                    url, headers={**headers(tenant["key"], sid), "accept": "text/event-stream"}
                )

            # Closing them frees their slots. The server gives a slot back once it sees its
            # client gone, a Redis round trip after the close, so a stream opened at that very
            # moment may still be refused; within the Retry-After it must not be.
            async def reopen() -> int | None:
                async with AsyncExitStack() as stack:
                    again = await open_streams(stack, c, url, tenant["key"], sid, 1)
                    status = again[0].status_code
                return None if status == 429 else status

            status = await wait_until_async(reopen, timeout=5, what="a slot given back")
            return refused, status

    refused, reopened = asyncio.run(scenario())
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "5"
    body = refused.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32000
    assert "session (limit 3)" in body["error"]["message"]
    assert reopened == 200


def test_streams_of_one_key_are_bounded_across_its_sessions(
    fault_database, fault_redis, start_server
):
    tenant, server, url = tenant_server(
        fault_database, fault_redis, start_server, session=10, key=4, process=100
    )

    async def scenario():
        async with httpx2.AsyncClient(timeout=30) as c:
            first = await open_session(c, url, tenant["key"])
            second = await open_session(c, url, tenant["key"])
            async with AsyncExitStack() as stack:
                await open_streams(stack, c, url, tenant["key"], first, 2)
                await open_streams(stack, c, url, tenant["key"], second, 2)
                get = {**headers(tenant["key"], second), "accept": "text/event-stream"}
                return await c.get(url, headers=get)

    refused = asyncio.run(scenario())
    assert refused.status_code == 429
    assert "API key (limit 4)" in refused.json()["error"]["message"]


def test_a_process_at_its_stream_limit_answers_503_with_retry_after(
    fault_database, fault_redis, start_server
):
    tenant, server, url = tenant_server(
        fault_database, fault_redis, start_server, session=10, key=10, process=2
    )

    async def scenario():
        async with httpx2.AsyncClient(timeout=30) as c:
            sid = await open_session(c, url, tenant["key"])
            async with AsyncExitStack() as stack:
                await open_streams(stack, c, url, tenant["key"], sid, 2)
                get = {**headers(tenant["key"], sid), "accept": "text/event-stream"}
                return await c.get(url, headers=get)

    refused = asyncio.run(scenario())
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "5"
    assert refused.json()["error"]["code"] == -32000
