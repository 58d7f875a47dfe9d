"""SSE streams of a session: every event is appended to a Redis stream before it is sent, so a
client that loses the connection can resume it with Last-Event-ID from any worker.

Event ids are `<stream>.<redis id>`: unique within the session and naming the stream they belong
to, so a resumption replays that stream only.
"""

import asyncio
import secrets
from contextlib import suppress

from django.conf import settings

from infra import keys as rkeys
from mcp_protocol import sse
from mcp_protocol.jsonrpc import dumps

from .http import send_chunk, start_sse

FINAL = b"f"
DISCONNECT = b"x"  # the server asks the client to reconnect later (2025-11-25 polling)
GET_STREAM = "get"
RETRY_MS = 1000


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

    def __init__(self, redis, sid: str, stream: str):
        self.redis = redis
        self.sid = sid
        self.stream = stream
        self.key = rkeys.session_stream(sid, stream)
        self.queue: asyncio.Queue = asyncio.Queue()

    async def emit(self, message: dict, *, final: bool = False) -> None:
        await self._append({b"d": dumps(message), **({FINAL: b"1"} if final else {})})

    async def disconnect(self, retry_ms: int) -> None:
        await self._append({DISCONNECT: str(retry_ms).encode()})

    async def close_without_response(self) -> None:
        """A cancelled request gets no response, but its stream still has to end."""
        await self._append({FINAL: b"1"})

    async def _append(self, fields: dict) -> None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.xadd(self.key, fields, maxlen=10_000, approximate=True)
        pipe.expire(self.key, settings.MCP_SESSION_IDLE_SECONDS)
        redis_id, _ = await pipe.execute()
        self.queue.put_nowait((f"{self.stream}.{redis_id.decode()}", fields))


def render(event_id: str, fields: dict, event_type: str | None = None) -> bytes:
    data = fields.get(b"d")
    if data is None:
        return b""
    return sse.event(data, event_id=event_id, event_type=event_type)


async def watch_disconnect(receive, gone: asyncio.Event) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return


async def serve_post_stream(send, receive, writer: StreamWriter, headers, *, priming: bool) -> None:
    """Send a POST's SSE response until its final event, a disconnect, or a requested reconnect."""
    gone = asyncio.Event()
    watcher = asyncio.create_task(watch_disconnect(receive, gone))
    pending = [watcher]
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


async def serve_get_stream(
    send,
    receive,
    redis,
    sid: str,
    stream: str,
    start_id: str,
    headers,
    *,
    session_alive,
    prelude: bytes = b"",
    event_type: str | None = None,
    reader=None,
    tick=None,
) -> None:
    """Replay a stream after `start_id`, then follow it live.

    A POST stream ends after its final event; the GET stream runs until the client goes away or
    the session ends. `session_alive` is an async callable checked at every keep-alive. The
    blocking reads go to `reader` (the stream's own connection, see stream_limits.py), else to
    `redis`; a read in flight when the client goes away is cancelled at once, so the stream's
    connection is not held on its behalf. `tick`, if given, is awaited once per round.
    """
    reader = reader or redis
    gone = asyncio.Event()
    watcher = asyncio.create_task(watch_disconnect(receive, gone))
    gone_wait = asyncio.ensure_future(gone.wait())
    key = rkeys.session_stream(sid, stream)
    block_ms = int(settings.MCP_SSE_KEEPALIVE_SECONDS * 1000)
    last = start_id
    try:
        await start_sse(send, headers)
        if prelude:
            await send_chunk(send, prelude)
        while not gone.is_set():
            if tick is not None:
                await tick()
            read = asyncio.ensure_future(reader.xread({key: last}, count=100, block=block_ms))
            await asyncio.wait({read, gone_wait}, return_when=asyncio.FIRST_COMPLETED)
            if gone.is_set():
                read.cancel()
                with suppress(asyncio.CancelledError, Exception):
                    await read
                return
            reply = read.result()
            if not reply:
                if not await session_alive():
                    await send_chunk(send, b"", more=False)
                    return
                await send_chunk(send, sse.comment())
                continue
            for redis_id, fields in reply[0][1]:
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
                await redis.hset(rkeys.session(sid), "gc", last)
    finally:
        watcher.cancel()
        gone_wait.cancel()
