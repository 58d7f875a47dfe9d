"""The handlers of the session era (2024-11-05 .. 2025-11-25) that act on the session itself,
and tasks/*. Each is `async handler(call: SessionCall) -> dict`; the table is dispatch.py, where
the core methods get their layers (gateway/pipeline/dispatch.py)."""

from dataclasses import dataclass
from typing import Any

from mcp_protocol import errors
from mcp_protocol.context import LOG_LEVELS
from mcp_protocol.jsonrpc import Request
from servers.snapshot import Snapshot

from ..pipeline.served import Served
from . import sessions, tasks
from .context import SessionContext
from .sessions import Session


@dataclass(frozen=True, slots=True)
class SessionCall:
    """One admitted session-era request, as a handler sees it: the admitted request as the
    layers read it (`Served`), its session, the message and the context the tool sees (its
    `writer` set when the call is answered on a stream)."""

    served: Served
    session: Session
    request: Request
    context: SessionContext
    # It may send notifications or ask the client before it answers (serving.session_request).
    talks_to_client: bool = False

    @property
    def snapshot(self) -> Snapshot:
        return self.served.snapshot


async def ping(call: SessionCall) -> dict[str, Any]:
    return {}


async def set_level(call: SessionCall) -> dict[str, Any]:
    level = call.request.params.get("level")
    if level not in LOG_LEVELS:
        raise errors.invalid_params(f"Unknown log level: {level!r}")
    await sessions.set_log_level(call.served.redis, call.session.sid, level)
    return {}


def _uri(request: Request) -> str:
    uri = request.params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise errors.invalid_params("params.uri is required")
    return uri


async def subscribe(call: SessionCall) -> dict[str, Any]:
    await sessions.subscribe(call.served.redis, call.session, _uri(call.request))
    return {}


async def unsubscribe(call: SessionCall) -> dict[str, Any]:
    await sessions.unsubscribe(call.served.redis, call.session, _uri(call.request))
    return {}


async def task_method(call: SessionCall) -> dict[str, Any]:
    result = await tasks.session_call(call.served, call.session, call.request, call.context)
    if result is None:
        raise errors.method_not_found(call.request.method)
    return result
