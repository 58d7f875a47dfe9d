"""`subscriptions/listen` (2026-07-28): the one long-lived stream of the stateless era.

The acknowledgement comes first and names the part of the filter the server honours; then only
the kinds of notification the client asked for, each tagged with the listen request's id. Changes
reach every listener on any worker through the server's Redis pub/sub channel
(servers.changes publishes {"method", "params"} there on every change).
"""

import asyncio
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

import orjson

from gateway.endpoint.http import Receive, Send
from infra import keys as rkeys
from infra.beat import Doorbell
from infra.coalesce import coalescer
from infra.hub import hub
from mcp_protocol import errors, sse
from mcp_protocol.jsonrpc import Request, RequestId, error_message, notification_message
from servers.snapshot import DefinitionError, get_snapshot

from ..pipeline import credentials as auth
from . import serving, stream_limits, streams, tasks
from .gate import Gate, Refused
from .http import respond_json, send_chunk, start_sse

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
# Filter flag -> (the capability that must allow it, the notification it lets through).
LIST_FLAGS = {
    "toolsListChanged": (("tools", "listChanged"), "notifications/tools/list_changed"),
    "promptsListChanged": (("prompts", "listChanged"), "notifications/prompts/list_changed"),
    "resourcesListChanged": (
        ("resources", "listChanged"),
        "notifications/resources/list_changed",
    ),
}
RESOURCE_UPDATED = "notifications/resources/updated"


async def wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


def _capable(capabilities: Mapping[str, Any], path: tuple[str, str]) -> bool:
    section = capabilities.get(path[0])
    return isinstance(section, dict) and bool(section.get(path[1]))


def honoured_filter(requested: dict[str, Any], capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of a listen filter this server delivers; raises -32602 for a malformed one."""
    honoured: dict[str, Any] = {}
    for flag, (capability, _method) in LIST_FLAGS.items():
        value = requested.get(flag)
        if value is None:
            continue
        if not isinstance(value, bool):
            raise errors.invalid_params(f"notifications.{flag} must be a boolean")
        if value and _capable(capabilities, capability):
            honoured[flag] = True
    uris = requested.get("resourceSubscriptions")
    if uris is not None:
        if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
            raise errors.invalid_params(
                "notifications.resourceSubscriptions must be a list of URIs"
            )
        if uris and _capable(capabilities, ("resources", "subscribe")):
            honoured["resourceSubscriptions"] = list(dict.fromkeys(uris))
    return honoured


def wanted(honoured: dict[str, Any], method: str, params: dict[str, Any]) -> bool:
    if method == RESOURCE_UPDATED:
        return params.get("uri") in honoured.get("resourceSubscriptions", ())
    return any(honoured.get(flag) and method == listed for flag, (_c, listed) in LIST_FLAGS.items())


def tagged(
    method: str, params: dict[str, Any] | None, subscription_id: RequestId
) -> dict[str, Any]:
    params = dict(params or {})
    params["_meta"] = {**(params.get("_meta") or {}), SUBSCRIPTION_ID: subscription_id}
    return notification_message(method, params)


def credential_digest(gate: Gate) -> str | None:
    """The digest a stream's API key or OAuth access token is cached under (None without
    one): computed once per stream, not at every turn."""
    token = auth.bearer_token(gate.arrival.authorization)
    if not token or (gate.caller.api_key_id is None and not gate.credential.is_oauth):
        return None
    return auth.digest(token)


async def still_admitted(gate: Gate, digest: str | None) -> errors.McpError | None:
    """Why a long-lived stream may no longer go on (its server paused, unpublished or deleted,
    its key revoked, expired or narrowed), or None. Checked between events, on Redis only unless
    a generation moved. `digest` is `credential_digest(gate)`."""
    # Asked with every other stream's question of this turn: one pipeline (infra/coalesce.py).
    batch = coalescer()
    asks = [batch.submit("GET", rkeys.server_generation(gate.slug), shared=True)]
    credential = gate.credential
    if digest is not None:
        generation_key = rkeys.key_generation(auth.generation_digest(digest))
        asks.append(batch.submit("GET", generation_key, shared=True))
    replies = await asyncio.gather(*asks)
    server_generation = replies[0].decode() if replies[0] else "0"
    # Through the cache even when the generation did not move: servers.invalidation may have
    # dropped the entry for a change Redis missed (a cache hit costs no SQL).
    try:
        snapshot = await get_snapshot(gate.slug, server_generation, gate.version)
    except DefinitionError:
        snapshot = None
    if snapshot is None or snapshot.status != "active":
        return errors.McpError(errors.INVALID_REQUEST, "This MCP server is no longer available")
    current: auth.Credential | None = credential
    if digest is not None:
        key_generation = replies[1].decode() if replies[1] else "0"
        cached = auth.cache.get(digest)
        if cached is not None and cached.generation == key_generation:
            current = cached
        else:
            current = await auth.load_credential(gate.redis, digest)
    assert gate.snapshot is not None  # the stream was admitted
    if credential.key_id is not None and (
        current is None
        or not current.usable(time.time())
        or current.organization_id != gate.snapshot.organization_id
        or (current.server_ids and gate.snapshot.server_id not in current.server_ids)
    ):
        return errors.McpError(errors.INVALID_REQUEST, "API key revoked or expired")
    if (
        credential.is_oauth
        and digest is not None
        and (current is None or not current.usable(time.time()))
    ):
        return errors.McpError(errors.INVALID_REQUEST, "Access token revoked or expired")
    return None


async def serve(gate: Gate, send: Send, request: Request) -> None:
    headers = gate.cors_headers()
    requested = request.params.get("notifications", {})
    try:
        if not isinstance(requested, dict):
            raise errors.invalid_params("notifications must be an object (the listen filter)")
        assert gate.snapshot is not None  # admitted
        honoured = honoured_filter(requested, gate.snapshot.capabilities)
        task_ids = await tasks.listen_task_ids(serving.served(gate), request, requested)
        if task_ids:
            honoured["taskIds"] = task_ids
    except errors.McpError as exc:
        await respond_json(send, 400, error_message(request.id, exc), headers)
        return

    try:
        async with stream_limits.open_stream(gate) as slot:
            await _follow(gate, send, request, honoured, task_ids, slot)
    except Refused as refused:
        # The listen request's own answer: the error, with its id.
        await respond_json(
            send,
            refused.status,
            error_message(request.id, refused.error),
            [*headers, *refused.headers],
        )


async def _follow(
    gate: Gate,
    send: Send,
    request: Request,
    honoured: dict[str, Any],
    task_ids: list[str],
    slot: stream_limits.Slot,
) -> None:
    headers = gate.cors_headers()
    assert gate.snapshot is not None  # admitted
    # One doorbell for everything the stream waits for (infra/beat.py): an event from the
    # process's one subscriber (infra/hub.py), its client going away, its turn on the clock.
    bell = Doorbell()
    inbox: deque[bytes | None] = deque()

    def deliver(_channel: str, data: bytes | None) -> None:
        inbox.append(data)
        bell.ring()

    subscription = await hub().listen(
        [rkeys.server_events(gate.snapshot.server_id), *tasks.task_channels(task_ids)], deliver
    )
    # Its person deprovisioned (servers/session_ends.py): check the credential now, not at the
    # next turn.
    recheck = False

    def credential_ended(_channel: str, data: bytes | None) -> None:
        nonlocal recheck
        if data is not None:
            recheck = True
            bell.ring()

    ended = await hub().listen([rkeys.credential_ended(gate.caller.ident)], credential_ended)
    gone = asyncio.create_task(wait_for_disconnect(gate.request.receive))
    gone.add_done_callback(lambda _t: bell.ring())
    # No timer of its own: the stream's chores come at its turn on the process's clock.
    ticket = streams.stream_beat().ticket(bell)
    digest = credential_digest(gate)
    try:
        await start_sse(send, headers)
        ack = tagged(
            "notifications/subscriptions/acknowledged", {"notifications": honoured}, request.id
        )
        await send_chunk(send, sse.event(orjson.dumps(ack)))
        while not gone.done():
            if not inbox and not ticket.due and not recheck:
                await bell.wait()
            if gone.done():
                return
            turn = ticket.take_turn()
            if turn or recheck:
                recheck = False
                if turn:
                    await slot.renew_if_due()
                refusal = await still_admitted(gate, digest)
                if refusal is not None:
                    # The stream ends with the listen request's own response, an error here.
                    final = error_message(request.id, refusal)
                    await send_chunk(send, sse.event(orjson.dumps(final)), more=False)
                    return
                if turn and not inbox:  # a keep-alive
                    await send_chunk(send, sse.comment())
            while inbox:
                await _forward(send, request, honoured, inbox.popleft())
    finally:
        ticket.close()
        gone.cancel()
        await asyncio.shield(subscription.close())
        await asyncio.shield(ended.close())


async def _forward(
    send: Send, request: Request, honoured: dict[str, Any], data: bytes | None
) -> None:
    """One message from the hub to the stream, if the listen filter wants it."""
    if data is None:  # the hub reconnected (nothing to replay here): a keep-alive
        await send_chunk(send, sse.comment())
        return
    event = orjson.loads(data)
    status = tasks.listen_notification(event)
    if status is not None:
        note = tagged(status["method"], status["params"], request.id)
        await send_chunk(send, sse.event(orjson.dumps(note)))
        return
    method, params = event.get("method"), event.get("params") or {}
    if isinstance(method, str) and wanted(honoured, method, params):
        note = tagged(method, params, request.id)
        await send_chunk(send, sse.event(orjson.dumps(note)))
