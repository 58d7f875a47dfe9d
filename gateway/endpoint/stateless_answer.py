"""One stateless-era request from its handler to its record: which handler answers the method
(dispatch.STATELESS), MRTR's answers of earlier rounds, the handler inside its layers, the
answer through the `Responder`, then the record stage. Every piece of it takes the typed call;
the transport (stateless_post.py) only reads the body and frames the answer."""

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_protocol import errors
from mcp_protocol.errors import McpError
from mcp_protocol.jsonrpc import Request, error_message, result_message
from servers.snapshot import Snapshot

from ..pipeline.record import record
from . import dispatch
from .stateless.envelope import MRTR_METHODS, check_tool_headers, http_status
from .stateless.request_state import read_answers
from .stateless.responder import Responder, StatelessCall
from .stateless.results import decorate

log = logging.getLogger(__name__)

# A stateless method's handler (dispatch.STATELESS).
StatelessHandler = Callable[[StatelessCall], Awaitable[dict[str, Any]]]

# Methods a modern client may not use: they belong to the session era only.
REMOVED_METHODS = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    }
)


async def answer(call: StatelessCall, sent: Request, responder: Responder) -> None:
    """`sent` is the request as the client sent it, whose routing headers are checked (a
    meta-call's call.request is the call it names: gateway/agents/routing.py)."""
    started = time.perf_counter()
    request = call.request
    reply: dict[str, Any] | None = None
    try:
        status = 200
        try:
            handler = handler_for(call.snapshot, sent, call.context.client_headers)
            if request.method in MRTR_METHODS:
                call.context.answers = read_answers(call.served, request)
            result = await handler(call)
            reply = result_message(request.id, decorate(call.snapshot, request.method, result))
        except McpError as exc:
            reply, status = error_message(request.id, exc), http_status(exc)
        except Exception:
            log.exception("Internal error in %s on %s", request.method, call.snapshot.slug)
            error = McpError(errors.INTERNAL_ERROR, "Internal error")
            reply, status = error_message(request.id, error), 500
        await responder.finish(reply, status)
    finally:
        # A call cancelled by its client is logged without a reply, as the session era does.
        client_info = call.envelope.client_info
        record(
            call.served.record,
            request.method,
            request.params,
            reply,
            started,
            client_info=client_info,
            connections=call.context.connections_used,
            task_id=call.context.task_id,
        )


def handler_for(snapshot: Snapshot, request: Request, headers: Any) -> StatelessHandler:
    method = request.method
    if method == "tools/call":
        check_tool_headers(snapshot, request, headers)
    handler = dispatch.STATELESS.get(method)
    if handler is not None:
        return handler
    if method in REMOVED_METHODS:
        raise McpError(
            errors.METHOD_NOT_FOUND,
            f"Method not found: {method} is not part of protocol version 2026-07-28",
            http_status=404,
        )
    raise McpError(errors.METHOD_NOT_FOUND, f"Method not found: {method}", http_status=404)
