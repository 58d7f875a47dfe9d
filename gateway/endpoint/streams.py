"""SSE streams of a session: every event is appended to a Redis stream before it is sent, so a
client that loses the connection can resume it with Last-Event-ID from any worker.

Event ids are `<stream>.<redis id>`: unique within the session and naming the stream they belong
to, so a resumption replays that stream only.
"""

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, cast

from django.conf import settings
from redis.asyncio import Redis

from infra import keys as rkeys
from infra import session_streams
from infra.beat import Beat, Doorbell, beat
from infra.coalesce import coalescer
from infra.hub import hub
from mcp_protocol import sse
from mcp_protocol.jsonrpc import dumps

from .http import Headers, Receive, Send, send_chunk, start_sse

FINAL = b"f"
DISCONNECT = b"x"  # the server asks the client to reconnect later (2025-11-25 polling)
GET_STREAM = "get"
RETRY_MS = 1000
# A GET stream re-reads its Redis stream every this many keep-alive turns even when not woken.
REREAD_TURNS = 4


def new_stream_name() -> str:
    return "p" + secrets.token_hex(6)


def parse_event_id(event_id: str) -> tuple[str, str] | None:
    stream, sep, redis_id = event_id.partition(".")
    if not sep or not stream or not redis_id:
        return None
    major, dash, minor = redis_id.partition("-")
    if not (dash and major.isdigit() and minor.isdigit()):
        return None
    if stream != GET_STREAM and not (stream.startswith("p") and stream[1:].isalnum()):
        return None
    return stream, redis_id


class StreamWriter:
    """Writes a POST's events to Redis and hands them to the live response, if it is still there."""

    def __init__(self, redis: Redis, sid: str, stream: str) -> None:
        self.redis = redis
        self.sid = sid
        self.stream = stream
        self.key = rkeys.session_stream(sid, stream)
        self.queue: asyncio.Queue[tuple[str, dict[bytes, bytes]]] = asyncio.Queue()

    async def emit(self, message: dict[str, Any], *, final: bool = False) -> None:
        await self._append({b"d": dumps(message), **({FINAL: b"1"} if final else {})})

    async def disconnect(self, retry_ms: int) -> None:
        await self._append({DISCONNECT: str(retry_ms).encode()})

    async def close_without_response(self) -> None:
        """A cancelled request gets no response, but its stream still has to end."""
        await self._append({FINAL: b"1"})

    async def _append(self, fields: dict[bytes, bytes]) -> None:
        pipe = self.redis.pipeline(transaction=False)
        session_streams.append(
            pipe,
            self.sid,
            self.stream,
            fields,
            maxlen=10_000,
            ttl_seconds=settings.MCP_SESSION_IDLE_SECONDS,
        )
        redis_id, _, _ = await pipe.execute()
        self.queue.put_nowait((f"{self.stream}.{redis_id.decode()}", fields))


def render(event_id: str, fields: dict[bytes, bytes], event_type: str | None = None) -> bytes:
    data = fields.get(b"d")
    if data is None:
        return b""
    return sse.event(data, event_id=event_id, event_type=event_type)


async def watch_disconnect(receive: Receive, gone: asyncio.Event) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return


async def answer_on_stream(
    send: Send,
    receive: Receive,
    writer: StreamWriter,
    replying: Awaitable[dict[str, Any] | None],
    headers: Headers,
    *,
    priming: bool,
    background: set[asyncio.Task[Any]],
) -> None:
    """A POST answered on a stream of its own: the call (`replying`, None when cancelled) runs
    on its own, so a dropped connection is not a cancellation and the rest of the stream stays
    in Redis for a resumption from any worker; the response follows the stream meanwhile."""
    task = asyncio.create_task(serve_final(writer, replying))
    background.add(task)
    task.add_done_callback(background.discard)
    await serve_post_stream(send, receive, writer, headers, priming=priming)


async def serve_final(writer: StreamWriter, replying: Awaitable[dict[str, Any] | None]) -> None:
    message = await replying
    if message is None:
        await writer.close_without_response()
    else:
        await writer.emit(message, final=True)


async def emit_reply(
    writer: StreamWriter, replying: Awaitable[dict[str, Any] | None]
) -> dict[str, Any] | None:
    """The reply (None when cancelled), put on the stream too (legacy HTTP+SSE)."""
    reply = await replying
    if reply is not None:
        await writer.emit(reply)
    return reply


async def serve_post_stream(
    send: Send, receive: Receive, writer: StreamWriter, headers: Headers, *, priming: bool
) -> None:
    """Send a POST's SSE response until its final event, a disconnect, or a requested reconnect."""
    gone = asyncio.Event()
    watcher = asyncio.create_task(watch_disconnect(receive, gone))
    pending: list[asyncio.Future[Any]] = [watcher]
    keepalive = settings.MCP_SSE_KEEPALIVE_SECONDS
    try:
        await start_sse(send, headers)
        if priming:
            # An id with empty data: the client can resume from here if the connection drops.
            await send_chunk(
                send, sse.event(b"", event_id=f"{writer.stream}.0-0", retry_ms=RETRY_MS)
            )
        gone_wait = asyncio.ensure_future(gone.wait())
        pending.append(gone_wait)
        while True:
            getter = asyncio.ensure_future(writer.queue.get())
            done, _ = await asyncio.wait(
                {getter, gone_wait}, timeout=keepalive, return_when=asyncio.FIRST_COMPLETED
            )
            if gone.is_set():
                getter.cancel()
                return
            if getter not in done:
                getter.cancel()
                await send_chunk(send, sse.comment())
                continue
            event_id, fields = getter.result()
            if DISCONNECT in fields:
                await send_chunk(
                    send,
                    sse.event(b"", event_id=event_id, retry_ms=int(fields[DISCONNECT])),
                    more=False,
                )
                return
            chunk = render(event_id, fields)
            final = FINAL in fields
            await send_chunk(send, chunk, more=not final)
            if final:
                return
    finally:
        for task in pending:
            task.cancel()


def session_alive_check(sid: str) -> Callable[[], Awaitable[bool]]:
    """A GET stream's check that its session still exists: an EXISTS sent with every other
    stream's check of the same turn, as one pipeline (infra/coalesce.py)."""
    batch, session_key = coalescer(), rkeys.session(sid)

    async def session_alive() -> bool:
        return bool(await batch.execute("EXISTS", session_key))

    return session_alive


def stream_beat() -> Beat:
    """The process's keep-alive clock for long-lived streams (infra/beat.py)."""
    return beat(lambda: float(settings.MCP_SSE_KEEPALIVE_SECONDS))


async def serve_get_stream(
    send: Send,
    receive: Receive,
    redis: Redis,
    sid: str,
    stream: str,
    start_id: str,
    headers: Headers,
    *,
    session_alive: Callable[[], Awaitable[bool]],
    prelude: bytes = b"",
    event_type: str | None = None,
    tick: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Replay a stream after `start_id`, then follow it live.

    A POST stream ends after its final event; the GET stream runs until the client goes away or
    the session ends. The stream holds no Redis connection nor timer of its own: it waits for
    the session's wake-up from the process's one subscriber (infra/hub.py) or for its turn on
    the process's keep-alive clock (infra/beat.py), both ringing its one doorbell, then reads
    what is new with a short XREAD sent together with every other stream's (infra/coalesce.py).
    It also reads every REREAD_TURNS turns: the hub wakes every stream when its connection comes
    back, so this is only a backstop, and a wake-up lost anyway delays an event, never loses
    it. At each turn it awaits
    `tick` (if given), then `session_alive` (an async callable: the stream ends when it is false)
    and sends a keep-alive comment.
    """
    # One doorbell for everything the stream waits for (infra/beat.py): its client going away,
    # a wake-up from the hub, its turn on the clock.
    bell = Doorbell()
    gone = asyncio.Event()
    watcher = asyncio.create_task(watch_disconnect(receive, gone))
    watcher.add_done_callback(lambda _t: bell.ring())
    key = rkeys.session_stream(sid, stream)
    woken = False
    # The session was ended from outside (its person deprovisioned, servers/session_ends.py):
    # check it now instead of at the next keep-alive turn.
    ended = False

    def wake(_channel: str, data: bytes | None) -> None:
        nonlocal woken, ended
        woken = True
        if data == rkeys.SESSION_ENDED:
            ended = True
        bell.ring()

    last = start_id
    batch = coalescer()
    subscription = await hub().listen([rkeys.session_wake(sid)], wake)
    ticket = stream_beat().ticket(bell)
    try:
        await start_sse(send, headers)
        if prelude:
            await send_chunk(send, prelude)
        quiet = False
        turns = 0
        while not gone.is_set():
            if ended:
                ended = False
                if not await session_alive():
                    await send_chunk(send, b"", more=False)
                    return
            if quiet:
                # Nothing new at the last read: wait for a wake-up, the client, or our turn.
                if not woken and not ticket.due:
                    await bell.wait()
                if gone.is_set():
                    return
                if ended:
                    continue  # checked at the top of the loop
                if ticket.take_turn():
                    turns += 1
                    if tick is not None:
                        await tick()
                    if not await session_alive():
                        await send_chunk(send, b"", more=False)
                        return
                    await send_chunk(send, sse.comment())
                    if not woken and turns % REREAD_TURNS:
                        continue
                elif not woken:
                    continue
            woken = False
            reply = await batch.execute("XREAD", "COUNT", 100, "STREAMS", key, last, shared=True)
            quiet = not reply
            if quiet:
                continue
            for redis_id, fields in _entries(reply):
                last = redis_id.decode()
                event_id = f"{stream}.{last}"
                if DISCONNECT in fields:
                    continue
                chunk = render(event_id, fields, event_type)
                if FINAL in fields and stream != GET_STREAM:
                    await send_chunk(send, chunk, more=False)
                    return
                if chunk:
                    await send_chunk(send, chunk)
            if stream == GET_STREAM:
                await batch.execute("HSET", rkeys.session(sid), "gc", last)
    finally:
        ticket.close()
        watcher.cancel()
        await asyncio.shield(subscription.close())


def _entries(reply: Any) -> list[Any]:
    """The entries of a one-stream XREAD reply (RESP2: a list of [key, entries]; RESP3: a map)."""
    if isinstance(reply, dict):
        return cast(list[Any], next(iter(reply.values()))[0]) if reply else []
    return cast(list[Any], reply[0][1])
