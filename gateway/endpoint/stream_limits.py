"""Bounds on long-lived streams (session GET streams, the old SSE transport, 2026-07-28
`subscriptions/listen`).

Every such stream takes a slot before it starts and gives it back when it ends, whatever ends it:

- per process: at most MCP_STREAMS_PER_PROCESS open at once, counted in memory; beyond that
  503 with Retry-After (another process may have room);
- per session and per API key (per client address for anonymous callers), across every
  process: at most MCP_STREAMS_PER_SESSION and MCP_STREAMS_PER_KEY, counted in Redis sorted
  sets of leases (member: a random lease id, score: when it lapses). A stream renews its lease
  while it runs (`Slot.renew_if_due`), so the slots of a process that died lapse by themselves
  within LEASE_SECONDS; beyond a limit, 429 with Retry-After.

A refusal is a JSON-RPC error body (code -32000) before any stream byte is sent.

No stream holds a Redis connection of its own: every stream of a process waits on the
process's one pub/sub subscriber (infra/hub.py) and reads with short commands on the shared
pool, so an idle stream costs memory only, not a connection. Renewals and give-backs leave
with the other streams' commands in one pipeline (infra/coalesce.py), so ten thousand streams
renewing cost a few round trips, not ten thousand.
"""

import asyncio
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from django.conf import settings
from redis.asyncio import Redis

from infra import keys
from infra.coalesce import coalescer
from infra.redis import is_cluster
from mcp_protocol import errors

from .gate import Gate, Refused

TOO_MANY = errors.SERVER_ERROR
RETRY_AFTER_SECONDS = 5
_open_in_process = 0


def lease_seconds() -> float:
    # Several keep-alive periods: a live stream renews long before its lease lapses.
    return max(30.0, 4 * float(settings.MCP_SSE_KEEPALIVE_SECONDS))


def session_key(sid: str) -> str:
    return keys.stream_leases_of_session(sid)


def caller_key(server_id: int, caller: str) -> str:
    return keys.stream_leases_of_caller(server_id, caller)


def _caller(gate: Gate) -> str:
    ident = gate.caller.ident
    if ident == "anon":
        client = gate.request.scope.get("client") or ("unknown", 0)
        return f"anon:{client[0]}"
    return ident


def open_in_process() -> int:
    return _open_in_process


def _refusal(status: int, message: str) -> Refused:
    return Refused(
        status,
        TOO_MANY,
        message,
        [("retry-after", str(RETRY_AFTER_SECONDS))],
        reason="too_many_streams",
    )


class Slot:
    """One open stream's place under the limits."""

    def __init__(self, shared_redis: Redis, keys: list[str]) -> None:
        self.shared = shared_redis
        self.keys = keys
        self.lease = secrets.token_hex(8)
        self.renewed = 0.0
        # Read once: settings are a lazy object, and ten thousand streams renew at every turn.
        self.lease_seconds = lease_seconds()

    async def take(self, limits: list[tuple[str, int]]) -> None:
        now = time.time()
        lease = self.lease_seconds
        # On a Redis Cluster one MULTI per key: a session's leases and its caller's live in
        # different slots (a MULTI may not span slots), and each count stands alone anyway.
        groups = [[key] for key in self.keys] if is_cluster() else [self.keys]
        pipes = []
        for group in groups:
            pipe = self.shared.pipeline(transaction=True)
            for key in group:
                pipe.zremrangebyscore(key, "-inf", now)
                pipe.zadd(key, {self.lease: now + lease})
                pipe.zcard(key)
                pipe.expire(key, int(lease * 2))
            pipes.append(pipe.execute())
        replies = [reply for replies in await asyncio.gather(*pipes) for reply in replies]
        self.renewed = time.monotonic()
        for index, (what, limit) in enumerate(limits):
            if replies[index * 4 + 2] > limit:
                await self.give_back()
                raise _refusal(429, f"Too many open streams for this {what} (limit {limit})")

    async def renew_if_due(self) -> None:
        """Called at the stream's keep-alive turns; renews the lease once a third of it has
        passed, together with every other stream's renewal of this turn (infra/coalesce.py)."""
        lease = self.lease_seconds
        if time.monotonic() - self.renewed < lease / 3:
            return
        self.renewed = time.monotonic()
        batch = coalescer()
        lapses = time.time() + lease
        await asyncio.gather(
            *(batch.submit("ZADD", key, "XX", lapses, self.lease) for key in self.keys),
            *(batch.submit("EXPIRE", key, int(lease * 2), shared=True) for key in self.keys),
        )

    async def give_back(self) -> None:
        batch = coalescer()
        with suppress(Exception):  # the lease lapses by itself if Redis is away
            await asyncio.gather(*(batch.execute("ZREM", key, self.lease) for key in self.keys))


@asynccontextmanager
async def open_stream(gate: Gate, *, session_id: str | None = None) -> AsyncIterator[Slot]:
    """Take a slot for a stream of `gate`'s caller (and session), or raise Refused."""
    global _open_in_process
    per_process = int(settings.MCP_STREAMS_PER_PROCESS)
    if _open_in_process >= per_process:
        raise _refusal(503, "This server process has too many open streams; retry shortly")
    limits = [("API key", int(settings.MCP_STREAMS_PER_KEY))]
    assert gate.snapshot is not None  # a stream opens after admit()
    keys = [caller_key(gate.snapshot.server_id, _caller(gate))]
    if session_id is not None:
        limits.append(("session", int(settings.MCP_STREAMS_PER_SESSION)))
        keys.append(session_key(session_id))
    _open_in_process += 1
    slot: Slot | None = None
    try:
        slot = Slot(gate.redis, keys)
        await slot.take(limits)
        yield slot
    finally:
        _open_in_process -= 1
        if slot is not None:
            # Shielded: a stream ends by cancellation too (server shutdown), and the slot must
            # still be given back.
            await asyncio.shield(slot.give_back())
