"""The hot path's hook: keep what a watched request said and answered, and send its event to the
server's inspector group once it is answered.

Cost when nobody watches: `gate.watched` comes from the round trip the gate already makes
(servers/endpoint/state_read.py), so an unwatched request pays one attribute check per ASGI
message and nothing else. When watched, the event is built and sent in a background task after
the response went out (fire and forget: a failed send loses an event, never a request).

A person reads a few rows a second, so each process sends at most INSPECTOR_EVENTS_PER_SECOND
events per server; the rest are counted and the next event says how many were not shown. That
keeps a watched server under heavy traffic within a few percent of an unwatched one.
"""

import logging
import time

from channels.layers import get_channel_layer
from django.conf import settings

from vault.masking import Masker

from . import events
from .watch import group_name

log = logging.getLogger(__name__)

# Enough of a body to show; the event itself says when more was sent.
CAPTURE_LIMIT = events.MAX_BODY_BYTES + 1
_maskers: dict = {}


class Budget:
    """Events per second and server in this process: {server id: [second, sent, skipped]}."""

    def __init__(self):
        self.windows: dict[int, list[int]] = {}

    def take(self, server_id: int, rate: int) -> int | None:
        """None when over the budget (counted as skipped); else how many were skipped since
        the last event sent."""
        second = int(time.monotonic())
        window = self.windows.get(server_id)
        if window is None:
            if len(self.windows) >= 10_000:  # bounded memory, whatever number of servers
                self.windows.clear()
            window = self.windows[server_id] = [second, 0, 0]
        if window[0] != second:
            window[0], window[1] = second, 0
        if window[1] >= rate:
            window[2] += 1
            return None
        window[1] += 1
        skipped, window[2] = window[2], 0
        return skipped


budget = Budget()


class Capture:
    """The status, content type and (bounded) body of the response, while watched."""

    __slots__ = ("status", "content_type", "chunks", "size", "started")

    def __init__(self):
        self.status = 0
        self.content_type = ""
        self.chunks: list[bytes] = []
        self.size = 0
        self.started = time.perf_counter()

    def wrap(self, send, gate):
        async def capturing_send(message):
            if gate.watched:
                self.keep(message)
            await send(message)

        return capturing_send

    def keep(self, message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            for name, value in message.get("headers", ()):
                if name == b"content-type":
                    self.content_type = value.decode("latin-1")
        elif message["type"] == "http.response.body" and self.size < CAPTURE_LIMIT:
            body = message.get("body", b"")
            self.chunks.append(body[: CAPTURE_LIMIT - self.size])
            self.size += len(body)


def finished(gate, capture: Capture, path_rest: str, refused=None) -> None:
    """Called once the request was answered (or refused); publishes only while watched."""
    if not gate.watched or gate.snapshot is None:
        return
    skipped = budget.take(gate.snapshot.server_id, settings.INSPECTOR_EVENTS_PER_SECOND)
    if skipped is None:
        return
    from servers.endpoint.gate import start_background

    start_background(_publish(gate, capture, path_rest, refused, time.perf_counter(), skipped))


async def _publish(
    gate, capture: Capture, path_rest: str, refused, finished_at: float, skipped: int
) -> None:
    try:
        status = capture.status or (refused.status if refused is not None else 0)
        response_raw = b"".join(capture.chunks)
        response_type = capture.content_type
        if refused is not None and not response_raw:
            response_raw = _refusal_body(refused)
            response_type = "application/json"
        event = events.build(
            gate=gate,
            path_rest=path_rest,
            status=status,
            request_raw=gate.request.body,
            response_raw=response_raw,
            response_type=response_type,
            started=capture.started,
            finished=finished_at,
            refusal_reason=getattr(refused, "reason", "") if refused is not None else "",
            masker=await _masker(gate.snapshot),
        )
        event["skippedBefore"] = skipped
        await get_channel_layer().group_send(
            group_name(gate.snapshot.server_id), {"type": "inspector.event", "event": event}
        )
    except Exception:
        log.warning("live inspector: could not publish an event", exc_info=True)


def _refusal_body(refused) -> bytes:
    import orjson

    return orjson.dumps({"jsonrpc": "2.0", "id": None, "error": refused.error.to_dict()})


async def _masker(snapshot) -> Masker | None:
    """A Masker over the organization's vault values (cached per values object, which the
    vault's own cache replaces when a secret changes)."""
    from vault.resolve import asecrets_for

    try:
        values = await asecrets_for(snapshot.organization_id, snapshot.server_id)
    except Exception:
        log.warning("live inspector: vault values unreadable; masking credentials only")
        return None
    key = (snapshot.organization_id, snapshot.server_id)
    cached = _maskers.get(key)
    if cached is not None and cached[0] is values:
        return cached[1]
    masker = Masker(list(values.values()))
    _maskers[key] = (values, masker)
    return masker
