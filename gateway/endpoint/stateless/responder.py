"""How one POST is answered, and what a handler of the stateless era is given."""

import asyncio
from typing import Any

import orjson

from gateway.endpoint.http import Headers, Send
from mcp_protocol import sse
from mcp_protocol.jsonrpc import Request
from servers.snapshot import Snapshot

from ...pipeline.served import Served
from ..http import respond_json, send_chunk, start_sse
from ..stateless_context import StatelessContext
from ..streams import stream_beat
from .envelope import Envelope


class Responder:
    """Answers one POST: plain JSON when the call ends before it has anything to stream (so an
    error keeps its HTTP status), an SSE stream from its first notification on. A stream gets
    a keep-alive comment at its turn on the process's stream clock (infra/beat.py) until the
    call ends; a call answered with plain JSON arms nothing."""

    def __init__(self, send: Send, headers: Headers, *, can_stream: bool) -> None:
        self.send = send
        self.headers = headers
        self.can_stream = can_stream
        self.streaming = False
        self.done = False
        self.lock = asyncio.Lock()
        self._beating: asyncio.Task[None] | None = None

    async def notify(self, message: dict[str, Any]) -> None:
        if not self.can_stream:
            return
        async with self.lock:
            if self.done:
                return
            if not self.streaming:
                await start_sse(self.send, self.headers)
                self.streaming = True
                self._beating = asyncio.create_task(self._keep_alive_at_each_turn())
            await send_chunk(self.send, sse.event(orjson.dumps(message)))

    async def keep_alive(self) -> None:
        async with self.lock:
            if self.streaming and not self.done:
                await send_chunk(self.send, sse.comment())

    async def _keep_alive_at_each_turn(self) -> None:
        with stream_beat().ticket() as ticket:
            while not self.done:
                await ticket.turn()
                await self.keep_alive()

    def close(self) -> None:
        """The call has ended (answered, cancelled or failed): no more keep-alives."""
        if self._beating is not None:
            self._beating.cancel()

    async def finish(self, message: dict[str, Any], status: int = 200) -> None:
        async with self.lock:
            if self.done:
                return
            self.done = True
            if self.streaming:
                await send_chunk(self.send, sse.event(orjson.dumps(message)), more=False)
            else:
                await respond_json(self.send, status, message, self.headers)


class StatelessCall:
    """One admitted modern request, as a handler (`async handler(call) -> dict`) sees it."""

    __slots__ = ("served", "request", "envelope", "context")

    def __init__(
        self, served: Served, request: Request, envelope: Envelope, context: StatelessContext
    ) -> None:
        self.served = served  # the admitted request as the layers read it
        self.request = request
        self.envelope = envelope
        self.context = context

    @property
    def snapshot(self) -> Snapshot:
        return self.served.snapshot
