"""One dashboard session holds at most INSPECTOR_SOCKETS_PER_SESSION inspector sockets, counted
across web processes: real websockets against live servers sharing one Redis. One more is told
so and closed (4429); closing a socket frees its place; another session has its own count; and
the sockets of a process killed with -9 stop counting once their leases run out."""

import asyncio
import time
from contextlib import AsyncExitStack

import orjson
import pytest
import websockets

from infra import keys
from infra.redis import async_client
from inspector.consumers import CLOSE_TOO_MANY
from inspector.sockets import LEASE_SECONDS, session_digest
from tests.conftest import LiveServer
from tests.waiting import wait_until_async

from .conftest import watching

CAP = 3
CAPPED = {"INSPECTOR_SOCKETS_PER_SESSION": str(CAP)}


@pytest.fixture(scope="module")
def first(live_database):
    server = LiveServer(live_database, extra_env=CAPPED)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def second(live_database):
    server = LiveServer(live_database, extra_env=CAPPED)
    yield server
    server.stop()


async def attempt(server, slug: str, cookie: str):
    """Open the inspector: ("open", first message) when admitted, else ("closed", code, first
    message or None). The socket is closed again either way."""
    url = server.url.replace("http://", "ws://") + f"/ws/inspector/{slug}/"
    async with websockets.connect(
        url, origin=server.url, additional_headers={"Cookie": f"sessionid={cookie}"}
    ) as socket:
        try:
            message = orjson.loads(await asyncio.wait_for(socket.recv(), 10))
        except websockets.ConnectionClosed as closed:
            return ("closed", closed.rcvd.code if closed.rcvd else None, None)
        if message["type"] == "hello":
            return ("open", message)
        try:
            await asyncio.wait_for(socket.recv(), 10)
        except websockets.ConnectionClosed as closed:
            return ("closed", closed.rcvd.code if closed.rcvd else None, message)
        raise AssertionError(f"an unexpected message after {message}")


async def no_leases(cookie: str) -> bool:
    """Whether the session holds no live lease (lapsed ones linger until the next count)."""
    key = keys.inspector_sockets(session_digest(cookie))
    return await async_client().zcount(key, time.time(), "+inf") == 0


@pytest.fixture
def another_cookie(tenant, session_of) -> str:
    """A second dashboard session of the same person."""
    return session_of(tenant.user)


async def test_a_session_holds_at_most_its_cap_of_sockets_across_processes(
    first, second, tenant, owner_cookie, another_cookie
):
    cookie = owner_cookie
    async with AsyncExitStack() as held:
        # Two sockets on one process, one on the other: the session's three places.
        for server in (first, second, first):
            await held.enter_async_context(watching(server, tenant.slug, cookie))
        for server in (first, second):
            refused = await attempt(server, tenant.slug, cookie)
            assert refused == (
                "closed",
                CLOSE_TOO_MANY,
                {"type": "refused", "reason": "too_many_sockets", "limit": CAP},
            )
        # Another session of the same person counts on its own.
        assert (await attempt(second, tenant.slug, another_cookie))[0] == "open"

    # All three closed: each disconnect gives its place back (no lease left to run out).
    await wait_until_async(
        lambda: no_leases(cookie), timeout=10, what="the places given back on disconnect"
    )
    async with AsyncExitStack() as held:
        for server in (second, first, second):
            await held.enter_async_context(watching(server, tenant.slug, cookie))
        assert (await attempt(first, tenant.slug, cookie))[1] == CLOSE_TOO_MANY


async def test_the_sockets_of_a_killed_process_stop_counting_when_their_leases_run_out(
    live_database, first, tenant, owner_cookie
):
    cookie = owner_cookie
    doomed = LiveServer(live_database, extra_env=CAPPED)
    sockets = []
    try:
        url = doomed.url.replace("http://", "ws://") + f"/ws/inspector/{tenant.slug}/"
        for _ in range(CAP):
            socket = await websockets.connect(
                url, origin=doomed.url, additional_headers={"Cookie": f"sessionid={cookie}"}
            )
            sockets.append(socket)
            assert orjson.loads(await asyncio.wait_for(socket.recv(), 10))["type"] == "hello"
        doomed.process.kill()  # no disconnect runs: the leases stay behind
        doomed.process.wait(10)
        killed_at = time.monotonic()
    finally:
        doomed.stop()
        for socket in sockets:
            await socket.close()

    assert (await attempt(first, tenant.slug, cookie))[1] == CLOSE_TOO_MANY

    async def admitted():
        return (await attempt(first, tenant.slug, cookie))[0] == "open"

    await wait_until_async(admitted, timeout=LEASE_SECONDS + 10, what="the leases to run out")
    waited = time.monotonic() - killed_at
    print(f"\nplaces of a killed process free again after {waited:.1f} s (lease {LEASE_SECONDS} s)")
    assert waited <= LEASE_SECONDS + 5
