"""The stateless (2026-07-28) RequestContext.

Everything the call knows about its client comes from the request itself: the `_meta` envelope,
the answers of earlier rounds (`inputResponses`, and those carried in the sealed `requestState`).
Notifications go to the POST's own response stream; there are no server->client requests, so a
question the client has not answered yet ends the round with InputRequired (MRTR).
"""

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp_protocol.context import NO_HEADERS, REQUIRED_CAPABILITY, RequestContext, log_level_allows
from mcp_protocol.errors import MISSING_CLIENT_CAPABILITY, InputRequired, McpError
from mcp_protocol.jsonrpc import notification_message


class StatelessContext(RequestContext):
    def __init__(
        self,
        *,
        protocol_version: str,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any] | None,
        credential: str,
        log_level: str | None = None,
        progress_token: str | int | None = None,
        emit: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
        client_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.credential = credential
        self.log_level = log_level
        self.progress_token = progress_token
        self.client_headers = client_headers or NO_HEADERS
        # The client's answers so far (this round's and those sealed in its requestState).
        self.answers: dict[str, dict[str, Any]] = {}
        # The answers this run relied on: exactly what the next round's requestState must carry.
        self.used_answers: dict[str, dict[str, Any]] = {}
        self._emit = emit

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        # 2026-07-28: no logLevel in the request's _meta means no log notifications at all.
        if self._emit is None or self.log_level is None:
            return
        if not log_level_allows(self.log_level, level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        await self._emit(notification_message("notifications/message", params))

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        if self._emit is None or self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._emit(notification_message("notifications/progress", params))

    async def request(self, key: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        capability = REQUIRED_CAPABILITY.get(method)
        if capability and not isinstance(self.client_capabilities.get(capability), dict):
            raise McpError(
                MISSING_CLIENT_CAPABILITY,
                f"This request needs the client capability {capability!r} ({method}), "
                "which the request's clientCapabilities do not declare",
                {"requiredCapabilities": {capability: {}}},
                http_status=400,
            )
        if key in self.answers:
            self.used_answers[key] = self.answers[key]
            return self.answers[key]
        raise InputRequired({key: {"method": method, "params": params}})

    async def sleep(self, seconds: float) -> None:
        # A closed response stream cancels the task running the call, which ends this sleep.
        if seconds > 0:
            await asyncio.sleep(seconds)
