"""The session-era RequestContext: notifications and server->client requests travel on the
call's own SSE stream; answers and cancellations arrive through Redis from any worker."""

import secrets
from collections.abc import Mapping
from typing import Any, cast

import orjson
from django.conf import settings
from redis.asyncio import Redis

from infra import keys as rkeys
from mcp_protocol.caller import Caller
from mcp_protocol.context import NO_HEADERS, REQUIRED_CAPABILITY, RequestContext, log_level_allows
from mcp_protocol.errors import Cancelled, ToolError
from mcp_protocol.jsonrpc import notification_message, request_message
from mcp_protocol.versions import has_sse_polling

from .sessions import Session
from .streams import StreamWriter


def request_key(request_id: str | int) -> str:
    # 1 and "1" are different JSON-RPC ids, so the key keeps the JSON form.
    return orjson.dumps(request_id).decode()


class SessionContext(RequestContext):
    in_session = True

    def __init__(
        self,
        *,
        redis: Redis,
        session: Session,
        request_id: str | int,
        params: dict[str, Any],
        caller: Caller,
        writer: StreamWriter | None,
        client_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.redis = redis
        self.session = session
        self.protocol_version = session.protocol_version
        self.client_capabilities = session.capabilities
        self.client_info = session.client_info
        self.caller = caller
        self.client_headers = client_headers or NO_HEADERS
        self.request_id = request_id
        meta = params.get("_meta")
        self.progress_token = meta.get("progressToken") if isinstance(meta, dict) else None
        self.writer = writer
        self.cancelled = False
        self._cancel_key = rkeys.cancellation(session.sid, request_key(request_id))

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        if self.writer is None or not log_level_allows(self.session.log_level, level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        await self.writer.emit(notification_message("notifications/message", params))

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        if self.writer is None or self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.writer.emit(notification_message("notifications/progress", params))

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if self.writer is not None:
            await self.writer.emit(notification_message(method, params))

    async def request(self, key: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        capability = REQUIRED_CAPABILITY.get(method)
        if capability and capability not in self.client_capabilities:
            raise ToolError(
                f"This tool needs the client to support {capability}, "
                "and this client did not declare it."
            )
        if self.writer is None:
            raise ToolError(f"This tool needs to ask the client ({method}), which needs a stream.")
        server_request_id = f"srv-{secrets.token_hex(8)}"
        await self.writer.emit(request_message(server_request_id, method, params))
        answer_key = rkeys.client_response(self.session.sid, request_key(server_request_id))
        popped = await self.redis.blpop(
            [answer_key, self._cancel_key], timeout=settings.MCP_CLIENT_REQUEST_TIMEOUT_SECONDS
        )
        if popped is None:
            raise ToolError(f"The client did not answer {method} in time.")
        source, raw = popped
        if cast(bytes, source).decode() == self._cancel_key:
            self.cancelled = True
            raise Cancelled()
        answer = orjson.loads(raw)
        if answer.get("error"):
            message = answer["error"].get("message", "error")
            raise ToolError(f"The client answered {method} with an error: {message}")
        result: dict[str, Any] = answer.get("result") or {}
        return result

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            return
        popped = await self.redis.blpop([self._cancel_key], timeout=seconds)
        if popped is not None:
            self.cancelled = True
            raise Cancelled()

    async def disconnect(self, retry_ms: int = 1000) -> None:
        """Close the client's connection now; it resumes the stream later with Last-Event-ID."""
        if self.writer is not None and has_sse_polling(self.protocol_version):
            await self.writer.disconnect(retry_ms)
