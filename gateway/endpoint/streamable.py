"""Streamable HTTP at /mcp/<slug> for the session era (2024-11-05 .. 2025-11-25): the POST of
initialize that makes a session, GET (SSE) and DELETE. A POST to an existing session is
session_post.py; the stream loop, sessions and dispatch live in their own modules."""

import logging
import time
from typing import Any, cast

from gateway.endpoint.http import Send
from infra import keys as rkeys
from mcp_protocol import errors, versions
from mcp_protocol.errors import McpError
from mcp_protocol.jsonrpc import (
    Request,
    RequestId,
    error_message,
    result_message,
)
from servers.snapshot import Snapshot

from ..pipeline.record import record
from . import session_post, sessions, stream_limits, streams, tasks
from .gate import Gate, session_header
from .http import respond, respond_json
from .stateless import envelope as stateless_envelope

log = logging.getLogger(__name__)

SESSION_METHODS = {"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}


def error_body(error: McpError, request_id: RequestId | None = None) -> dict[str, Any]:
    return error_message(request_id if request_id is not None else error.request_id, error)


async def initialize_post(gate: Gate, send: Send, request: Request) -> None:
    """initialize: the handshake that makes the session."""
    session_post.check_version_header(gate)
    await initialize(gate, send, request)


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


__all__ = ["handle_get", "handle_delete", "session_header"]
