"""One POST of the stateless era: the transport. It reads the request and its envelope, makes
the typed call the layers take (serving.py: `Served`; a meta-call routed to the call it names),
and frames the answer; a client that closes the connection cancels the call (2026-07-28
cancellation). From the handler to the record is stateless_answer.py; subscriptions/listen
takes over the response (listen.py)."""

from typing import Any

from gateway.endpoint.http import Send
from mcp_protocol import errors
from mcp_protocol.errors import McpError
from mcp_protocol.jsonrpc import Notification, Request

from ..agents import routing as agents_routing
from . import disconnect, listen, serving
from .gate import Gate, Refused
from .http import respond
from .stateless.envelope import Envelope, http_status, read_envelope, refusal
from .stateless.responder import Responder, StatelessCall
from .stateless_answer import answer
from .stateless_context import StatelessContext


async def handle(gate: Gate, send: Send, parsed: Any) -> None:
    if isinstance(parsed, Notification):
        # A modern client has nothing to tell the server out of band; accept and ignore.
        await respond(send, 202, headers=gate.cors_headers())
        return
    request = one_request(parsed)
    envelope = envelope_of(gate, request)
    served = serving.served(gate)
    responder = Responder(
        send, gate.cors_headers(), can_stream=gate.request.accepts("text/event-stream")
    )
    ctx = StatelessContext(
        protocol_version=envelope.protocol_version,
        client_capabilities=envelope.capabilities,
        client_info=envelope.client_info,
        caller=served.caller,
        log_level=envelope.log_level,
        progress_token=envelope.progress_token,
        emit=responder.notify,
        client_headers=gate.request.headers,
    )
    # A meta-call becomes the call it names (gateway/agents/routing.py); the headers are
    # checked against what the client sent.
    call = StatelessCall(served, agents_routing.route(served, request), envelope, ctx)
    try:
        # A lost connection cancels the call's task (disconnect.py); a streamed answer sends
        # its own keep-alives (Responder).
        await disconnect.run_until_done_or_gone(gate.request, answer(call, request, responder))
    finally:
        responder.close()


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
