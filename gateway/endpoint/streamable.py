"""Streamable HTTP at /mcp/<slug>: POST, GET (SSE), DELETE and OPTIONS for the session era
(2024-11-05 .. 2025-11-25).

Just over 400 lines: the transport's four verbs share their session and stream checks, and the
spec reads them as one section; the stream loop, sessions and dispatch live in their own modules."""

import asyncio
import logging
import time
from typing import Any, cast

import orjson

from gateway.endpoint.http import Send
from infra import keys as rkeys
from mcp_protocol import errors, versions
from mcp_protocol.errors import Cancelled, McpError
from mcp_protocol.jsonrpc import (
    Notification,
    Request,
    RequestId,
    Response,
    error_message,
    result_message,
)
from servers.snapshot import Snapshot

from ..agents import routing as agents_routing
from ..pipeline.record import record
from . import dispatch, sessions, stream_limits, streams, tasks
from .context import SessionContext, request_key
from .gate import Gate, Refused, session_header
from .http import respond, respond_json
from .session_methods import SessionCall
from .stateless import envelope as stateless_envelope

log = logging.getLogger(__name__)

SESSION_METHODS = {"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}


def error_body(error: McpError, request_id: RequestId | None = None) -> dict[str, Any]:
    return error_message(request_id if request_id is not None else error.request_id, error)


async def session_post(gate: Gate, send: Send, parsed: Any) -> None:
    """A session-era POST (2024-11-05 .. 2025-11-25), admitted and charged (entrance.py)."""
    parsed = agents_routing.route_all(gate, parsed)
    check_version_header(gate)
    session = gate.session
    if session is None:
        if gate.session_id:
            raise Refused(404, errors.SESSION_NOT_FOUND, "Session not found")
        raise Refused(400, errors.SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required")
    if isinstance(parsed, list):
        if not versions.allows_batches(session.protocol_version):
            raise Refused(
                400,
                errors.INVALID_REQUEST,
                f"Batches are not part of protocol version {session.protocol_version}",
            )
        await handle_batch(gate, send, parsed)
    elif isinstance(parsed, Request):
        await handle_request(gate, send, parsed)
    else:
        # A notification or the client's answer to a question: taken, and answered 202.
        await take_message(gate, parsed)
        await respond(send, 202, headers=gate.cors_headers())


async def initialize_post(gate: Gate, send: Send, request: Request) -> None:
    """initialize: the handshake that makes the session."""
    check_version_header(gate)
    await initialize(gate, send, request)


def check_version_header(gate: Gate) -> None:
    header_version = gate.request.header("mcp-protocol-version")
    if header_version and not versions.is_supported(header_version):
        # The gate leaves this to the body for POSTs without a session (see stateless/).
        raise Refused(
            400, errors.INVALID_REQUEST, f"Unsupported MCP-Protocol-Version: {header_version}"
        )


async def take_message(gate: Gate, message: Notification | Response) -> None:
    if isinstance(message, Notification):
        await handle_notification(gate, message)
    else:
        await deliver_client_response(gate, message)


def read_initialize(params: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """The negotiated version, client capabilities and clientInfo of an initialize request."""
    requested = params.get("protocolVersion")
    version = versions.negotiate(requested if isinstance(requested, str) else None)
    capabilities = params.get("capabilities")
    client_info = params.get("clientInfo")
    return (
        version,
        capabilities if isinstance(capabilities, dict) else {},
        client_info if isinstance(client_info, dict) else None,
    )


def initialize_result(snapshot: Snapshot, version: str) -> dict[str, Any]:
    result = {
        "protocolVersion": version,
        "capabilities": tasks.session_capabilities(snapshot, version),
        "serverInfo": snapshot.server_info,
    }
    if snapshot.instructions:
        result["instructions"] = snapshot.instructions
    return result


async def initialize(gate: Gate, send: Send, request: Request) -> None:
    started = time.perf_counter()
    version, capabilities, client_info = read_initialize(request.params)
    snapshot = gate.snapshot
    assert snapshot is not None  # admitted
    session = await sessions.create(
        gate.redis,
        server_id=snapshot.server_id,
        credential=gate.caller.ident,
        protocol_version=version,
        capabilities=capabilities,
        client_info=client_info,
    )
    headers = [*gate.cors_headers(), ("mcp-session-id", session.sid)]
    reply = result_message(request.id, initialize_result(snapshot, version))
    await respond_json(send, 200, reply, headers)
    record(gate.call(), "initialize", request.params, reply, started, client_info=client_info)


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


def may_talk_to_client(snapshot: Snapshot, request: Request) -> bool:
    """Whether a call may send notifications or ask the client before it answers: a tool
    whose kind says it streams progress."""
    if request.method == "prompts/get":
        name = request.params.get("name")
        prompt = snapshot.prompts.get(name) if isinstance(name, str) else None
        return prompt is not None and bool(getattr(prompt, "steps", None))
    if request.method != "tools/call":
        return False
    if agents_routing.talks_to_client(snapshot, request):
        return True
    name = request.params.get("name")
    tool = snapshot.tools.get(name) if isinstance(name, str) else None
    return tool is not None and tool.kind.streams_progress


def wants_stream(gate: Gate, request: Request) -> bool:
    assert gate.snapshot is not None  # admitted
    return gate.request.accepts("text/event-stream") and (
        may_talk_to_client(gate.snapshot, request) or tasks.wants_stream(request)
    )


async def run_method(gate: Gate, request: Request, ctx: SessionContext) -> dict[str, Any]:
    handler = dispatch.SESSION.get(request.method)
    if handler is None:
        raise errors.method_not_found(request.method)
    return await handler(SessionCall(gate, request, ctx))


async def answer(gate: Gate, request: Request, ctx: SessionContext) -> dict[str, Any] | None:
    """The JSON-RPC response for a request (None when it was cancelled), logged as a call."""
    started = time.perf_counter()
    try:
        reply = result_message(request.id, await run_method(gate, request, ctx))
    except Cancelled:
        reply = None
    except McpError as exc:
        reply = error_message(request.id, exc)
    except Exception:
        assert gate.snapshot is not None  # admitted
        log.exception("Internal error in %s on %s", request.method, gate.snapshot.slug)
        reply = error_message(request.id, McpError(errors.INTERNAL_ERROR, "Internal error"))
    record(
        gate.call(),
        request.method,
        request.params,
        reply,
        started,
        connections=ctx.connections_used,
    )
    return reply


async def handle_request(gate: Gate, send: Send, request: Request) -> None:
    headers = gate.cors_headers()
    if not wants_stream(gate, request):
        ctx = gate.context(request, writer=None)
        message = await answer(gate, request, ctx)
        if message is None:
            await respond(send, 202, headers=headers)
        else:
            await respond_json(send, 200, message, headers)
        return

    session = gate.session
    assert session is not None  # gate.context below binds the call to it
    writer = streams.StreamWriter(gate.redis, session.sid, streams.new_stream_name())
    ctx = gate.context(request, writer=writer)

    async def run() -> None:
        message = await answer(gate, request, ctx)
        if message is None:
            await writer.close_without_response()
        else:
            await writer.emit(message, final=True)

    # The call runs on its own: a dropped connection is not a cancellation, and the rest of
    # the stream stays in Redis for a resumption from any worker.
    task = asyncio.create_task(run())
    gate.background.add(task)
    task.add_done_callback(gate.background.discard)
    await streams.serve_post_stream(
        send,
        gate.request.receive,
        writer,
        headers,
        priming=versions.has_sse_polling(session.protocol_version),
    )


async def handle_batch(gate: Gate, send: Send, messages: list[Any]) -> None:
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
            reply = await answer(gate, message, gate.context(message, writer=None))
            if reply is not None:
                replies.append(reply)
    if replies:
        await respond_json(send, 200, replies, gate.cors_headers())
    else:
        await respond(send, 202, headers=gate.cors_headers())


async def handle_get(gate: Gate, send: Send) -> None:
    req = gate.request
    if gate.session is None and stateless_envelope.is_modern(
        None, gate.session_id, gate.request.header("mcp-protocol-version", "")
    ):
        await respond(send, 405, headers=[*gate.cors_headers(), ("allow", "POST, OPTIONS")])
        return
    if not req.accepts("text/event-stream"):
        await respond_json(
            send,
            406,
            error_body(McpError(errors.INVALID_REQUEST, "GET needs Accept: text/event-stream")),
            gate.cors_headers(),
        )
        return
    session = gate.session
    if session is None:
        status, code, text = (
            (404, errors.SESSION_NOT_FOUND, "Session not found")
            if gate.session_id
            else (400, errors.SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required")
        )
        await respond_json(send, status, error_body(McpError(code, text)), gate.cors_headers())
        return
    last_event_id = req.header("last-event-id")
    if last_event_id:
        parsed = streams.parse_event_id(last_event_id)
        if parsed is None:
            await respond_json(
                send,
                400,
                error_body(McpError(errors.INVALID_REQUEST, "Malformed Last-Event-ID")),
                gate.cors_headers(),
            )
            return
        stream, start = parsed
    else:
        stream = streams.GET_STREAM
        cursor = cast(bytes | None, await gate.redis.hget(rkeys.session(session.sid), "gc"))
        start = cursor.decode() if cursor else "0-0"

    async with stream_limits.open_stream(gate, session_id=session.sid) as slot:
        await streams.serve_get_stream(
            send,
            req.receive,
            gate.redis,
            session.sid,
            stream,
            start,
            gate.cors_headers(),
            session_alive=streams.session_alive_check(session.sid),
            tick=slot.renew_if_due,
        )


async def handle_delete(gate: Gate, send: Send) -> None:
    session = gate.session
    if session is None and stateless_envelope.is_modern(
        None, gate.session_id, gate.request.header("mcp-protocol-version", "")
    ):
        await respond(send, 405, headers=[*gate.cors_headers(), ("allow", "POST, OPTIONS")])
        return
    if session is None:
        status = 404 if gate.session_id else 400
        await respond_json(
            send,
            status,
            error_body(McpError(errors.SESSION_NOT_FOUND, "Session not found")),
            gate.cors_headers(),
        )
        return
    await sessions.end(gate.redis, session)
    await respond(send, 200, headers=gate.cors_headers())


__all__ = ["session_post", "handle_get", "handle_delete", "session_header"]
