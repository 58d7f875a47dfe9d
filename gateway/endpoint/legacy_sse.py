"""The HTTP+SSE transport of 2024-11-05: GET /mcp/<slug>/sse opens the stream and names the
endpoint for POSTs; every answer goes out on that session's stream (and, as the seed documents
show, in the POST's own body too)."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from django.conf import settings
from redis.typing import EncodableT

from gateway.endpoint.http import Send
from mcp_protocol import errors, sse
from mcp_protocol.errors import McpError
from mcp_protocol.jsonrpc import (
    Notification,
    Request,
    Response,
    error_message,
    parse_body,
    result_message,
)
from observability import tracing

from ..agents import routing as agents_routing
from . import inbound, serving, session_post, sessions, stream_limits, streamable, streams
from .gate import Gate, Refused
from .http import BodyTooLarge, respond, respond_json

LEGACY_VERSION = "2024-11-05"


async def handle_stream(gate: Gate, send: Send) -> None:
    if not gate.request.accepts("text/event-stream"):
        await respond_json(send, 406, {"error": "Accept: text/event-stream is required"})
        return
    async with stream_limits.open_stream(gate) as slot:
        await _serve_stream(gate, send, slot)


async def _serve_stream(gate: Gate, send: Send, slot: stream_limits.Slot) -> None:
    assert gate.snapshot is not None  # admitted
    session = await sessions.create(
        gate.redis,
        server_id=gate.snapshot.server_id,
        credential=gate.caller.ident,
        protocol_version=LEGACY_VERSION,
        capabilities={},
        client_info=None,
    )
    endpoint = f"/mcp/{gate.slug}/messages/?session_id={session.sid}"
    if agents_routing.FULL_LIST_QUERY[1] in (gate.request.query.get("tools") or []):
        endpoint += "&tools=all"  # the stream's URL asked for every tool; so do its POSTs
    prelude = sse.event(endpoint.encode(), event_type="endpoint")

    try:
        await streams.serve_get_stream(
            send,
            gate.request.receive,
            gate.redis,
            session.sid,
            streams.GET_STREAM,
            "0-0",
            gate.cors_headers(),
            session_alive=streams.session_alive_check(session.sid),
            prelude=prelude,
            event_type="message",
            tick=slot.renew_if_due,
        )
    finally:
        # On this transport the session lives exactly as long as its stream.
        await sessions.end(gate.redis, session)


async def handle_message(gate: Gate, send: Send) -> None:
    """A POST to the session's endpoint: its body read and parsed, traced and admitted as the
    entrance does it for streamable HTTP (a meta-call charged as the tool it names:
    servers/quotas.py), then framed by the function for its kind (`KINDS`)."""
    if gate.session is None:
        status = 404 if gate.session_id else 400
        await respond_json(send, status, {"error": "Unknown or missing session_id"})
        return
    try:
        body = await gate.request.read_body(settings.MCP_MAX_BODY_BYTES)
        message = parse_body(body)
    except BodyTooLarge:
        await respond_json(send, 413, {"error": "Request body too large"})
        return
    except McpError as exc:
        await respond_json(send, 400, streamable.error_body(exc))
        return
    tracing.begin(gate, message)
    try:
        await gate.admit_calls(message)
    except Refused as refused:
        # Over a quota, the POST gets its 429 and the client, which waits for the answer on
        # the stream, gets it there too as the call's JSON-RPC error (a scope refusal only the
        # POST).
        if refused.status == 429:
            await session_writer(gate).emit(error_message(refused.request_id, refused.error))
        raise
    await KINDS[inbound.kind_of("session", message)](gate, send, message)


def session_writer(gate: Gate) -> streams.StreamWriter:
    """The session's one stream, which every answer of this transport goes out on."""
    assert gate.session is not None  # a legacy POST names its stream's session
    return streams.StreamWriter(gate.redis, gate.session.sid, streams.GET_STREAM)


async def batch_post(gate: Gate, send: Send, messages: list[Any]) -> None:
    refused = McpError(errors.INVALID_REQUEST, "Batches are not supported")
    await respond_json(send, 400, streamable.error_body(refused))


async def notice_post(gate: Gate, send: Send, message: Notification | Response) -> None:
    if isinstance(message, Notification):
        await session_post.handle_notification(gate, message)
    else:
        await session_post.deliver_client_response(gate, message)
    await respond(send, 202, b"Accepted", "text/plain", gate.cors_headers())


async def initialize_post(gate: Gate, send: Send, request: Request) -> None:
    reply = await initialize(gate, request)
    await session_writer(gate).emit(reply)
    await respond_json(send, 200, reply, gate.cors_headers())


async def request_post(gate: Gate, send: Send, request: Request) -> None:
    """The same typed call as a streamable POST's (serving.session_request), its context
    writing to the session's stream, answered by session_post.answer; the answer goes out on
    the stream and, as the seed documents show, in the POST's own body too."""
    assert gate.session is not None  # a legacy POST names its stream's session
    writer = streams.StreamWriter(gate.redis, gate.session.sid, streams.GET_STREAM)
    call = serving.session_request(gate, gate.session, request, writer=writer)
    replying = streams.emit_reply(writer, session_post.answer(call))
    if call.talks_to_client:
        # The call may need the client's answer, which arrives in a later POST: accept this one
        # now (old clients send one POST at a time) and let the result travel on the stream.
        task = asyncio.create_task(replying)
        gate.background.add(task)
        task.add_done_callback(gate.background.discard)
        await respond(send, 202, b"Accepted", "text/plain", gate.cors_headers())
        return
    reply = await replying
    if reply is None:
        await respond(send, 202, b"Accepted", "text/plain", gate.cors_headers())
    else:
        await respond_json(send, 200, reply, gate.cors_headers())


# The frame of each kind of POST (inbound.kind_of, session era).
KINDS: dict[inbound.Kind, Callable[[Gate, Send, Any], Awaitable[None]]] = {
    "batch": batch_post,
    "notice": notice_post,
    "initialize": initialize_post,
    "request": request_post,
}


async def initialize(gate: Gate, request: Request) -> dict[str, Any]:
    """The session was made when the stream opened; initialize fills in what the client said."""
    version, capabilities, client_info = streamable.read_initialize(request.params)
    mapping: dict[EncodableT, EncodableT] = {"v": version, "caps": orjson.dumps(capabilities)}
    if client_info:
        mapping["ci"] = orjson.dumps(client_info)
    assert gate.session is not None  # a legacy POST names its stream's session
    await sessions.update(gate.redis, gate.session.sid, mapping)
    assert gate.snapshot is not None  # admitted
    return result_message(request.id, streamable.initialize_result(gate.snapshot, version))
