"""The RequestContext a tool sees while it runs as a task on a worker.

Nobody holds a connection to the client while a task runs: requests to the client are parked
on the task row (status input_required, `inputRequests`) until tasks/update brings the answers,
and progress and log messages go to the task's Redis channel for whoever listens.

An unanswered request parks and ends the run with InputRequired, as a stateless round does; the
runner waits for the answers and runs the tool again from the top, where they are found. So a
workflow's `all` step puts all its questions to the client at once, here as in the stateless era.
"""

import asyncio
from typing import Any

import orjson

from infra.redis import publish
from mcp_protocol.context import REQUIRED_CAPABILITY, RequestContext
from mcp_protocol.errors import (
    INVALID_PARAMS,
    MISSING_CLIENT_CAPABILITY,
    Cancelled,
    InputRequired,
    McpError,
)

from . import principal
from .events import events_channel
from .wire import is_extension_era


class TaskContext(RequestContext):
    def __init__(self, task, redis, park_request, settle_request, caller=None) -> None:
        self.task_id = task.id
        self.protocol_version = task.protocol_version
        self.client_capabilities = task.client_capabilities or {}
        self.client_info = None
        # The request that made the task has gone: its caller is the one the row names, as the
        # runner checked it again (principal.at_execution).
        self.caller = caller if caller is not None else principal.submitted(task)
        self._redis = redis
        self._park = park_request  # async (key, method, params) -> None: make it outstanding
        self._settle = settle_request  # async (key) -> None: it is answered
        self.responses: dict = dict(task.input_responses or {})
        self.cancelled = False
        self._poke = asyncio.Event()
        # The latest progress message: the runner's watcher stores it on the row as the task's
        # statusMessage (what tasks/get shows), at most once per watch tick.
        self.progress_message: str | None = None

    # Called by the runner's watcher when the row changes.
    def observe(self, *, responses: dict, cancelled: bool) -> None:
        self.responses = responses
        self.cancelled = self.cancelled or cancelled
        self._poke.set()

    def _check_cancelled(self) -> None:
        if self.cancelled:
            raise Cancelled()

    async def _publish(self, event: dict) -> None:
        await publish(self._redis, events_channel(self.task_id), orjson.dumps(event))

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        await self._publish({"type": "log", "level": level, "data": data, "logger": logger})

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        self._check_cancelled()
        event = {"type": "progress", "progress": progress, "total": total, "message": message}
        if message:
            self.progress_message = str(message)
        await self._publish(event)

    def _require_capability(self, method: str) -> None:
        needed = REQUIRED_CAPABILITY.get(method)
        if needed is None or needed in self.client_capabilities:
            return
        if is_extension_era(self.protocol_version):
            raise McpError(
                MISSING_CLIENT_CAPABILITY,
                "Missing required client capability",
                {"requiredCapabilities": {needed: {}}},
            )
        raise McpError(INVALID_PARAMS, f"Client does not support {method}")

    async def request(self, key: str, method: str, params: dict) -> dict:
        self._require_capability(method)
        self._check_cancelled()
        if key not in self.responses:
            await self._park(key, method, params)
            raise InputRequired({key: {"method": method, "params": params}})
        await self._settle(key)
        return self.responses[key]

    async def wait_for_answers(self, keys) -> None:
        """Until the client has answered every one of `keys` (Cancelled when the task is)."""
        while not all(key in self.responses for key in keys):
            self._check_cancelled()
            self._poke.clear()
            await self._poke.wait()
        self._check_cancelled()

    async def sleep(self, seconds: float) -> None:
        self._check_cancelled()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(seconds, 0.0)
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            self._poke.clear()
            try:
                await asyncio.wait_for(self._poke.wait(), remaining)
            except TimeoutError:
                return
            self._check_cancelled()
