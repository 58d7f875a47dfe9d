"""A POST of the session era (2024-11-05 .. 2025-11-25) to its session, admitted and charged
(entrance.py, which tells a request, a batch and a notice apart): the transport. It makes the
typed call the layers take (serving.session_request: `Served`, a meta-call routed to the call it
names), answers each request (dispatch, then record: `answer`) and frames the answer: in the
POST's body, or on a stream of its own for a call that may talk to the client first. The
legacy transport (legacy_sse.py) answers through the same `answer`."""

import logging
import time
from typing import Any

import orjson

from gateway.endpoint.http import Send
from infra import keys as rkeys
from mcp_protocol import errors, versions
from mcp_protocol.errors import Cancelled, McpError
from mcp_protocol.jsonrpc import Notification, Request, Response, error_message, result_message

from ..pipeline.record import record
from . import dispatch, serving, streams
from .context import request_key
from .gate import Gate, Refused
from .http import respond, respond_json
from .session_methods import SessionCall
from .sessions import Session

log = logging.getLogger(__name__)


async def request_post(gate: Gate, send: Send, request: Request) -> None:
    """One request: answered in the POST's body, or on a stream of its own when it may talk to
    the client first (decided with the typed call: its context then writes to that stream)."""
    session = admitted_session(gate)
    call = serving.session_request(
        gate, session, request, accepts_stream=gate.request.accepts("text/event-stream")
    )
    headers = gate.cors_headers()
    replying = answer(call)
    writer = call.context.writer
    if writer is None:
        message = await replying
        if message is None:
            await respond(send, 202, headers=headers)
        else:
            await respond_json(send, 200, message, headers)
        return
    await streams.answer_on_stream(
        send,
        gate.request.receive,
        writer,
        replying,
        headers,
        priming=versions.has_sse_polling(session.protocol_version),
        background=gate.background,
    )


async def batch_post(gate: Gate, send: Send, messages: list[Any]) -> None:
    session = admitted_session(gate)
    if not versions.allows_batches(session.protocol_version):
        raise Refused(
            400,
            errors.INVALID_REQUEST,
            f"Batches are not part of protocol version {session.protocol_version}",
        )
    replies: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, Notification):
            await handle_notification(gate, message)
        elif isinstance(message, Response):
            await deliver_client_response(gate, message)
        elif message.method == "initialize":
            replies.append(
                error_message(
                    message.id,
                    McpError(errors.INVALID_REQUEST, "initialize cannot be part of a batch"),
                )
            )
        else:
            reply = await answer(serving.session_request(gate, session, message))
            if reply is not None:
                replies.append(reply)
    if replies:
        await respond_json(send, 200, replies, gate.cors_headers())
    else:
        await respond(send, 202, headers=gate.cors_headers())


async def notice_post(gate: Gate, send: Send, message: Notification | Response) -> None:
    """A notification or the client's answer to a question: taken, and answered 202."""
    admitted_session(gate)
    if isinstance(message, Notification):
        await handle_notification(gate, message)
    else:
        await deliver_client_response(gate, message)
    await respond(send, 202, headers=gate.cors_headers())


def admitted_session(gate: Gate) -> Session:
    """The session the POST names, after its MCP-Protocol-Version header is checked."""
    check_version_header(gate)
    session = gate.session
    if session is None:
        if gate.session_id:
            raise Refused(404, errors.SESSION_NOT_FOUND, "Session not found")
        raise Refused(400, errors.SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required")
    return session


def check_version_header(gate: Gate) -> None:
    header_version = gate.request.header("mcp-protocol-version")
    if header_version and not versions.is_supported(header_version):
        # The gate leaves this to the body for POSTs without a session (see stateless/).
        raise Refused(
            400, errors.INVALID_REQUEST, f"Unsupported MCP-Protocol-Version: {header_version}"
        )


async def answer(call: SessionCall) -> dict[str, Any] | None:
    """The JSON-RPC response for a request (None when it was cancelled), logged as a call:
    dispatch (the method's handler inside its layers, dispatch.SESSION), then record."""
    request = call.request
    started = time.perf_counter()
    try:
        handler = dispatch.SESSION.get(request.method)
        if handler is None:
            raise errors.method_not_found(request.method)
        reply = result_message(request.id, await handler(call))
    except Cancelled:
        reply = None
    except McpError as exc:
        reply = error_message(request.id, exc)
    except Exception:
        log.exception("Internal error in %s on %s", request.method, call.snapshot.slug)
        reply = error_message(request.id, McpError(errors.INTERNAL_ERROR, "Internal error"))
    record(
        call.served.record,
        request.method,
        request.params,
        reply,
        started,
        connections=call.context.connections_used,
        task_id=call.context.task_id,
    )
    return reply


async def handle_notification(gate: Gate, note: Notification) -> None:
    if note.method == "notifications/cancelled":
        request_id = note.params.get("requestId")
        if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
            assert gate.session is not None  # a session-era notification comes with its session
            key = rkeys.cancellation(gate.session.sid, request_key(request_id))
            pipe = gate.redis.pipeline(transaction=False)
            pipe.rpush(key, b"1")
            pipe.expire(key, 600)
            await pipe.execute()
    # notifications/initialized, roots/list_changed and the rest need no action here.


async def deliver_client_response(gate: Gate, response: Response) -> None:
    assert gate.session is not None  # the client answers on its session
    key = rkeys.client_response(gate.session.sid, request_key(response.id))
    payload = (
        {"error": response.error} if response.error is not None else {"result": response.result}
    )
    pipe = gate.redis.pipeline(transaction=False)
    pipe.rpush(key, orjson.dumps(payload))
    pipe.expire(key, 600)
    await pipe.execute()
