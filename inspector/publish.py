"""The hot path's hook: keep what a watched request said and answered, and send its event to the
server's inspector channel once it is answered (a stream's event also when it opens).

Cost when nobody watches: `gate.watched` comes from the gate's state mirror
(gateway/pipeline/mirror.py), so an unwatched request pays one attribute check per ASGI
message and nothing else. When watched, the event is built in a background task after
the response went out (fire and forget: a failed send loses an event, never a request).

A person reads a few rows a second, so each process sends at most INSPECTOR_EVENTS_PER_SECOND
events per server; the rest are counted and the next event says how many were not shown. Events
leave in batches, one Redis PUBLISH per server every FLUSH_SECONDS (0.25 s) on the server's channel
(`infra.keys.inspector_events`), which every open inspector socket reads through its process's
one subscriber connection (infra/hub.py); the batch is sent as the socket's message, already
encoded, so neither side decodes it again. The vault values events are masked with are re-read
at most every MASKER_SECONDS. That keeps a watched server under heavy traffic within a few
percent of an unwatched one (bench/README.md).

A long-lived stream (a session's GET stream, the old SSE transport, `subscriptions/listen`)
shows when it opens: its event leaves as soon as the response starts (`"stream": "open"`), and
again under the same id when it ends (`"stream": "closed"`), which the page shows in place.
"""

import asyncio
import logging
import time
import uuid

import orjson
from django.conf import settings

from infra import keys
from infra.redis import async_client, publish, sync_client
from vault.masking import Masker

from . import events

log = logging.getLogger(__name__)

# Enough of a body to show; the event itself says when more was sent.
CAPTURE_LIMIT = events.MAX_BODY_BYTES + 1
# Often enough to feel live, rarely enough that a busy server pays a few wake-ups a second.
FLUSH_SECONDS = 0.25
# A secret added or changed shows unmasked in the inspector of its own organization for at most
# this long (only to members of that organization).
MASKER_SECONDS = 2.0
SSE = "text/event-stream"
_maskers: dict = {}
_outbox: dict[int, list[dict]] = {}
_flusher: asyncio.Task | None = None
_running: set = set()


def _background(coro) -> asyncio.Task:
    # A reference until done, so the loop does not drop the task half way.
    task = asyncio.create_task(coro)
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task


class Budget:
    """Events per second and server in this process: {server id: [second, sent, skipped]}."""

    def __init__(self):
        self.windows: dict[int, list[int]] = {}

    def full(self, server_id: int, rate: int) -> bool:
        """Whether an event finished now would be over the budget (nothing counted)."""
        window = self.windows.get(server_id)
        return window is not None and window[0] == int(time.monotonic()) and window[1] >= rate

    def skip(self, server_id: int) -> None:
        window = self.windows.get(server_id)
        if window is not None:
            window[2] += 1

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


def is_stream(request) -> bool:
    """A request whose answer is a stream that stays open: a GET (session stream, old SSE
    transport) or a `subscriptions/listen` POST."""
    return request.method == "GET" or b'"subscriptions/listen"' in request.body


class Capture:
    """The status, content type and (bounded) body of the response, while watched; a stream's
    opening is published when its response starts."""

    __slots__ = (
        "status",
        "content_type",
        "chunks",
        "size",
        "started",
        "stream_id",
        "keeping",
        "responded",
    )

    def __init__(self):
        self.status = 0
        self.content_type = ""
        self.chunks: list[bytes] = []
        self.size = 0
        self.started = time.perf_counter()
        self.stream_id = ""  # set once a stream's opening was published
        # Whether the answer is kept: decided when it starts, so that a request whose event
        # would be over this second's budget (most of them, under load) keeps nothing.
        self.keeping = False
        # Whether any response started, watched or not: the endpoint then sends no error of its
        # own (one wrapper of `send` for both, not two).
        self.responded = False

    def wrap(self, send, gate, path_rest: str):
        async def capturing_send(message):
            self.responded = True
            if gate.watched:
                if message["type"] == "http.response.start":
                    self.start(message, gate, path_rest)
                elif self.keeping:
                    self.keep(message)
            await send(message)

        return capturing_send

    def start(self, message, gate, path_rest: str) -> None:
        snapshot = gate.snapshot
        if snapshot is not None and budget.full(
            snapshot.server_id, settings.INSPECTOR_EVENTS_PER_SECOND
        ):
            self.status = message["status"]
            return
        self.keeping = True
        self.keep(message)
        if SSE in self.content_type and self.status < 300 and is_stream(gate.request):
            self.opened(gate, path_rest)

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

    def opened(self, gate, path_rest: str) -> None:
        if gate.snapshot is None:
            return
        skipped = budget.take(gate.snapshot.server_id, settings.INSPECTOR_EVENTS_PER_SECOND)
        if skipped is None:
            return
        self.stream_id = uuid.uuid4().hex
        _background(
            _publish(
                gate,
                path_rest,
                status=self.status,
                response_raw=b"",
                response_type=self.content_type,
                refused=None,
                started=self.started,
                finished_at=time.perf_counter(),
                skipped=skipped,
                extra={"id": self.stream_id, "stream": "open"},
            )
        )


def finished(gate, capture: Capture, path_rest: str, refused=None) -> None:
    """Called once the request was answered (or refused); publishes only while watched (and
    always the end of a stream whose opening was shown, so its row does not stay open)."""
    if gate.snapshot is None or not (gate.watched or capture.stream_id):
        return
    if capture.status and not capture.keeping:
        budget.skip(gate.snapshot.server_id)  # over the budget when its answer started
        return
    extra = {"id": capture.stream_id, "stream": "closed"} if capture.stream_id else {}
    skipped = budget.take(gate.snapshot.server_id, settings.INSPECTOR_EVENTS_PER_SECOND)
    if skipped is None:
        if not extra:
            return
        skipped = 0
    status = capture.status or (refused.status if refused is not None else 0)
    response_raw = b"".join(capture.chunks)
    response_type = capture.content_type
    if refused is not None and not response_raw:
        response_raw = _refusal_body(refused)
        response_type = "application/json"
    _background(
        _publish(
            gate,
            path_rest,
            status=status,
            response_raw=response_raw,
            response_type=response_type,
            refused=refused,
            started=capture.started,
            finished_at=time.perf_counter(),
            skipped=skipped,
            extra=extra,
        )
    )


def inner_call(gate, *, request: dict, reply: dict, status: int, started: float, extra: dict):
    """The event of a call made inside an answered request (a code-mode program's call_tool,
    gateway/endpoint/inner_calls.py): shown like the direct call it stands for, with `extra`
    naming what made it. Only while watched, within the same events budget."""
    if gate.snapshot is None or not gate.watched:
        return
    skipped = budget.take(gate.snapshot.server_id, settings.INSPECTOR_EVENTS_PER_SECOND)
    if skipped is None:
        return
    finished = time.perf_counter()
    # When it started, read now: the event is built later (after the masker is read), and the
    # calls of one program must show in the order they ran.
    at = time.time() - (finished - started)
    _background(
        _publish(
            gate,
            "/",
            status=status,
            response_raw=orjson.dumps(reply, default=str),
            response_type="application/json",
            refused=None,
            started=started,
            finished_at=finished,
            skipped=skipped,
            extra={**extra, "at": at},
            request_raw=orjson.dumps(request, default=str),
        )
    )


async def _publish(
    gate,
    path_rest: str,
    *,
    status: int,
    response_raw: bytes,
    response_type: str,
    refused,
    started: float,
    finished_at: float,
    skipped: int,
    extra: dict,
    request_raw: bytes | None = None,
) -> None:
    try:
        event = events.build(
            gate=gate,
            path_rest=path_rest,
            status=status,
            request_raw=gate.request.body if request_raw is None else request_raw,
            response_raw=response_raw,
            response_type=response_type,
            started=started,
            finished=finished_at,
            refusal_reason=getattr(refused, "reason", "") if refused is not None else "",
            masker=await _masker(gate.snapshot),
        )
        event.update(extra, skippedBefore=skipped)
        queue(gate.snapshot.server_id, event)
    except Exception:
        log.warning("live inspector: could not publish an event", exc_info=True)


def queue(server_id: int, event: dict) -> None:
    """Send `event` with the server's next batch (from the event loop)."""
    _outbox.setdefault(server_id, []).append(event)
    _ensure_flusher()


def message_of(batch: list[dict]) -> bytes:
    """What a socket sends its page, as published: the consumer forwards it as it is."""
    return orjson.dumps({"type": "requests", "events": batch})


def publish_now(server_id: int, event: dict) -> None:
    """One event sent at once from synchronous code (the OAuth views' requests: a handful a
    minute, not worth a batch)."""
    try:
        publish(sync_client(), keys.inspector_events(server_id), message_of([event]))
    except Exception:
        log.warning("live inspector: could not send an event", exc_info=True)


def _ensure_flusher() -> None:
    global _flusher
    loop = asyncio.get_running_loop()
    if _flusher is None or _flusher.done() or _flusher.get_loop() is not loop:
        _flusher = _background(_flush())


async def _flush() -> None:
    """Every FLUSH_SECONDS, one PUBLISH per server with the events waiting; ends when none
    wait (nothing awaits between that check and the end, so no event is left behind)."""
    redis = async_client()
    while True:
        await asyncio.sleep(FLUSH_SECONDS)
        if not _outbox:
            return
        batches = dict(_outbox)
        _outbox.clear()
        for server_id, batch in batches.items():
            try:
                await publish(redis, keys.inspector_events(server_id), message_of(batch))
            except Exception:
                log.warning("live inspector: could not send %d events", len(batch), exc_info=True)


def _refusal_body(refused) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": None, "error": refused.error.to_dict()})


async def _masker(snapshot) -> Masker | None:
    """A Masker over the organization's vault values, re-read at most every MASKER_SECONDS."""
    from vault.resolve import asecrets_for

    key = (snapshot.organization_id, snapshot.server_id)
    cached = _maskers.get(key)
    now = time.monotonic()
    if cached is not None and cached[0] > now:
        return cached[1]
    try:
        values = await asecrets_for(snapshot.organization_id, snapshot.server_id)
    except Exception:
        log.warning("live inspector: vault values unreadable; masking credentials only")
        return None
    if len(_maskers) >= 10_000:
        _maskers.clear()
    masker = Masker(list(values.values()))
    _maskers[key] = (now + MASKER_SECONDS, masker)
    return masker
