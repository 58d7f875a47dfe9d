"""What a POST to /mcp/<slug> carries, read once at the entrance: its body checked (size,
Content-Type, Accept) and parsed, and the protocol era it belongs to. A body that cannot be
taken is refused here, with the HTTP answer the transport has always given it."""

from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings

from mcp_protocol import errors
from mcp_protocol.errors import McpError
from mcp_protocol.jsonrpc import Request, parse_body

from ..pipeline.refused import Refused
from .http import BodyTooLarge, HttpRequest
from .stateless.envelope import is_modern

# The session era (2024-11-05 .. 2025-11-25) or the stateless one (2026-07-28).
Era = Literal["session", "stateless"]
# What the POST does in its era: the session era's handshake, the stateless era's subscription
# stream (each answers differently from an ordinary exchange), one request, a batch, or a
# notice (a notification, or the client's answer to a question: nothing to answer but 202).
Kind = Literal["initialize", "listen", "request", "batch", "notice"]


@dataclass(frozen=True, slots=True)
class Inbound:
    era: Era
    kind: Kind
    message: Any  # a Request, Notification or Response, or a batch of them


async def read(request: HttpRequest, session_id: str | None) -> Inbound:
    try:
        body = await request.read_body(settings.MCP_MAX_BODY_BYTES)
    except BodyTooLarge:
        raise _refused(413, f"Request body exceeds {settings.MCP_MAX_BODY_BYTES} bytes") from None
    headers = request.headers
    if "application/json" not in headers.get("content-type", ""):
        raise _refused(415, "Content-Type must be application/json")
    accept = headers.get("accept", "")
    if accept and not (
        _accepts(accept, "application/json") or _accepts(accept, "text/event-stream")
    ):
        raise _refused(406, "Accept must allow application/json and text/event-stream")
    try:
        message = parse_body(body)
    except McpError as exc:
        raise Refused(
            400, exc.code, exc.message, request_id=exc.request_id, data=exc.data
        ) from None
    version = headers.get("mcp-protocol-version", "")
    era: Era = "stateless" if is_modern(message, session_id, version) else "session"
    return Inbound(era, kind_of(era, message), message)


def kind_of(era: Era, message: Any) -> Kind:
    if isinstance(message, list):
        return "batch"
    if not isinstance(message, Request):
        return "notice"
    if era == "session" and message.method == "initialize":
        return "initialize"
    if era == "stateless" and message.method == "subscriptions/listen":
        return "listen"
    return "request"


def _accepts(accept: str, media_type: str) -> bool:
    return media_type in accept or "*/*" in accept  # as HttpRequest.accepts reads it


def _refused(status: int, message: str) -> Refused:
    return Refused(status, errors.INVALID_REQUEST, message)
