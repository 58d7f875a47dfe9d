"""Minimal ASGI request/response helpers for the hot path (no Django request objects here)."""

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, overload
from urllib.parse import parse_qs

from django.conf import settings

from mcp_protocol.jsonrpc import dumps

# The ASGI scope extension a server sets once it holds a request's whole body (getmcp's uvicorn
# protocol does): reading it then needs no deadline.
BODY_RECEIVED = "getmcp.body_received"
# The ASGI scope extension through which getmcp's uvicorn protocol tells the app that its client
# went away: a list the app appends callables to, each called once if the connection is lost
# before the response completes. Without it the app learns of a disconnect only by awaiting
# receive(), which took a task per call (gateway/endpoint/disconnect.py).
ON_DISCONNECT = "getmcp.on_disconnect"


class BodyTooLarge(Exception):
    pass


class BodyTimeout(Exception):
    """The whole body did not arrive within HTTP_BODY_TIMEOUT_SECONDS (a slow or stalled
    client must not hold a connection and a request slot for ever)."""


# The ASGI callables and scope, as the endpoint uses them.
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Headers = Iterable[tuple[str, str]]


def rpc_error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


class HttpRequest:
    __slots__ = ("scope", "receive", "method", "path", "headers", "_query", "body")

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.scope = scope
        self.receive = receive
        self.method = scope["method"]
        self.path = scope["path"]
        self.headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
        }
        self._query: dict[str, list[str]] | None = None
        self.body = b""  # as read by read_body (the live inspector shows it)

    @overload
    def header(self, name: str) -> str | None: ...

    @overload
    def header(self, name: str, default: str) -> str: ...

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name, default)

    @property
    def query(self) -> dict[str, list[str]]:
        if self._query is None:
            self._query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        return self._query

    def accepts(self, media_type: str) -> bool:
        accept = self.headers.get("accept", "")
        return media_type in accept or "*/*" in accept

    async def read_body(self, limit: int) -> bytes:
        length = self.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            raise BodyTooLarge()
        if self.scope.get("extensions", {}).get(BODY_RECEIVED):
            # The server holds the whole body already (getmcp.http_protocol says so once it
            # parsed the request's end): receive() hands it over without waiting, so no deadline
            # is armed. Arming and cancelling one was 3-4% of a warm call's CPU.
            return await self._read(limit)
        deadline = asyncio.get_running_loop().time() + settings.HTTP_BODY_TIMEOUT_SECONDS
        # One timer around the whole read (asyncio.timeout_at), not wait_for per message: on
        # Python 3.11 wait_for wraps each receive in a task of its own, a tenth of a warm call.
        try:
            async with asyncio.timeout_at(deadline):
                return await self._read(limit)
        except TimeoutError:
            raise BodyTimeout() from None

    async def _read(self, limit: int) -> bytes:
        chunks, size = [], 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge()
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        self.body = b"".join(chunks)
        return self.body


def encode_headers(headers: Headers) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]


async def respond(
    send: Send,
    status: int,
    body: bytes = b"",
    content_type: str | None = None,
    headers: Headers = (),
) -> None:
    raw = encode_headers(headers)
    if content_type:
        raw.append((b"content-type", content_type.encode()))
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def respond_json(send: Send, status: int, payload: Any, headers: Headers = ()) -> None:
    await respond(send, status, dumps(payload), "application/json", headers)


async def start_sse(send: Send, headers: Headers = ()) -> None:
    raw = encode_headers(headers)
    raw += [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache, no-transform"),
        (b"x-accel-buffering", b"no"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": raw})


async def send_chunk(send: Send, data: bytes, more: bool = True) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": more})
