"""One POST of the stateless era, from its envelope to its answer; a client that closes the
connection cancels the call (2026-07-28 cancellation). Which handler answers a method is the
table in dispatch.py; subscriptions/listen takes over the response (listen.py). The pieces it
puts together are the stateless/ package."""

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from gateway.endpoint.http import Send
from mcp_protocol import errors
from mcp_protocol.errors import McpError
from mcp_protocol.jsonrpc import Notification, Request, error_message, result_message

from ..agents import routing as agents_routing
from ..pipeline.record import record
from . import disconnect, dispatch, listen
from .gate import Gate, Refused
from .http import respond, respond_json
from .stateless.envelope import (
    MRTR_METHODS,
    Envelope,
    check_tool_headers,
    http_status,
    read_envelope,
    refusal,
)
from .stateless.request_state import read_answers
from .stateless.responder import Responder, StatelessCall
from .stateless.results import decorate
from .stateless_context import StatelessContext

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


async def handle(gate: Gate, send: Send, parsed: Any) -> None:
    if isinstance(parsed, Notification):
        # A modern client has nothing to tell the server out of band; accept and ignore.
        await respond(send, 202, headers=gate.cors_headers())
        return
    request = one_request(parsed)
    started = time.perf_counter()
    envelope = envelope_of(gate, request)
    headers = gate.cors_headers()
    # A meta-call becomes the call it names (gateway/agents/routing.py); the headers were
    # checked against what the client sent.
    routed = agents_routing.route(gate, request)
    try:
        handler = handler_for(gate, request)
    except McpError as exc:
        reply = error_message(request.id, exc)
        record(gate.call(), request.method, request.params, reply, started, **_who(envelope))
        await respond_json(send, http_status(exc), reply, headers)
        return
    responder = Responder(send, headers, can_stream=gate.request.accepts("text/event-stream"))
    await run_until_done_or_gone(gate, routed, envelope, handler, responder)


async def listen_post(gate: Gate, send: Send, request: Request) -> None:
    """subscriptions/listen: the response becomes the subscription's stream (listen.py)."""
    envelope_of(gate, request)
    await listen.serve(gate, send, request)


def one_request(parsed: Any) -> Request:
    if not isinstance(parsed, Request):
        error = refusal(
            errors.INVALID_REQUEST, "Protocol version 2026-07-28 takes one request per POST"
        )
        raise Refused(400, error.code, error.message)
    return parsed


def envelope_of(gate: Gate, request: Request) -> Envelope:
    """The request's `_meta` envelope and routing headers, checked in the era's error ladder."""
    try:
        return read_envelope(request, gate.request.headers)
    except McpError as exc:
        raise Refused(
            http_status(exc), exc.code, exc.message, request_id=request.id, data=exc.data
        ) from None


def handler_for(gate: Gate, request: Request) -> StatelessHandler:
    method = request.method
    if method == "tools/call":
        check_tool_headers(gate, request)
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


async def run_until_done_or_gone(
    gate: Gate,
    request: Request,
    envelope: Envelope,
    handler: StatelessHandler,
    responder: Responder,
) -> None:
    """Run the call; a client that closes the connection cancels it (2026-07-28 cancellation).
    A lost connection cancels the call's task (gateway/endpoint/disconnect.py); a streamed
    answer sends its own keep-alives (Responder)."""
    started = time.perf_counter()
    ctx = StatelessContext(
        protocol_version=envelope.protocol_version,
        client_capabilities=envelope.capabilities,
        client_info=envelope.client_info,
        caller=gate.caller,
        log_level=envelope.log_level,
        progress_token=envelope.progress_token,
        emit=responder.notify,
        client_headers=gate.request.headers,
    )
    call = StatelessCall(gate, request, envelope, ctx)
    reply: dict[str, Any] | None = None
    snapshot = gate.snapshot
    assert snapshot is not None  # admitted

    async def run() -> None:
        nonlocal reply
        status = 200
        try:
            if request.method in MRTR_METHODS:
                ctx.answers = read_answers(gate, request)
            result = await handler(call)
            reply = result_message(request.id, decorate(snapshot, request.method, result))
        except McpError as exc:
            reply, status = error_message(request.id, exc), http_status(exc)
        except Exception:
            log.exception("Internal error in %s on %s", request.method, snapshot.slug)
            error = McpError(errors.INTERNAL_ERROR, "Internal error")
            reply, status = error_message(request.id, error), 500
        await responder.finish(reply, status)

    try:
        await disconnect.run_until_done_or_gone(gate.request, run())
    finally:
        responder.close()
        # A call cancelled by its client is logged without a reply, as the session era does.
        record(
            gate.call(),
            request.method,
            request.params,
            reply,
            started,
            connections=ctx.connections_used,
            **_who(envelope),
        )


def _who(envelope: Envelope) -> dict[str, Any]:
    return {"client_info": envelope.client_info}
