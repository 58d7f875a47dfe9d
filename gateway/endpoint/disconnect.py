"""Cancel a running call when its client goes away, without a watcher task per call.

A 2026-07-28 call is cancelled by closing its connection. getmcp's uvicorn protocol says when a
connection is lost (ON_DISCONNECT, getmcp/http_protocol.py), and the call's task is cancelled
from there; under any other ASGI server one watcher task awaits receive() for the disconnect.
A watcher task per call, joined to the call by asyncio.wait with a keep-alive timeout, cost
about a sixth of a warm stateless call's CPU under uvicorn (docs/scaling.md).
"""

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from .http import ON_DISCONNECT, HttpRequest
from .listen import wait_for_disconnect


class CancelOnDisconnect:
    """While held, `task` is cancelled if the request's client goes away; `gone` says whether
    it did. Call `stop()` once the task has ended."""

    __slots__ = ("task", "gone", "_callbacks", "_watcher")

    def __init__(self, request: HttpRequest, task: asyncio.Task[None]) -> None:
        self.task = task
        self.gone = False
        self._watcher: asyncio.Task[None] | None = None
        self._callbacks: list[Callable[[], None]] | None = (
            request.scope.get("extensions") or {}
        ).get(ON_DISCONNECT)
        if self._callbacks is not None:
            self._callbacks.append(self._went)
        else:
            self._watcher = asyncio.create_task(wait_for_disconnect(request.receive))
            self._watcher.add_done_callback(self._watched)

    def _went(self) -> None:
        if not self.gone:
            self.gone = True
            self.task.cancel()

    def _watched(self, watcher: asyncio.Task[None]) -> None:
        # Reading receive() failing counts as the client having gone, as the message would.
        if not watcher.cancelled():
            watcher.exception()  # retrieved, so asyncio does not log it
            self._went()

    def stop(self) -> None:
        if self._callbacks is not None:
            self._callbacks.remove(self._went)
            self._callbacks = None
        if self._watcher is not None:
            self._watcher.remove_done_callback(self._watched)
            self._watcher.cancel()
            self._watcher = None


async def run_until_done_or_gone(request: HttpRequest, call: Coroutine[Any, Any, None]) -> bool:
    """Run `call` in a task of its own until it ends, or until the request's client goes away
    and it is cancelled; returns whether the client went."""
    task = asyncio.create_task(call)
    watch = CancelOnDisconnect(request, task)
    try:
        await task
    except asyncio.CancelledError:
        if not watch.gone:
            raise
    finally:
        watch.stop()
    return watch.gone
