"""The handlers of the session era (2024-11-05 .. 2025-11-25): the methods that act on the
session itself, the core methods of a server, and tools/call and tasks/* going to the tasks
module first. Each is `async handler(gate, request, ctx) -> dict`; the table is dispatch.py."""

from typing import Any

from mcp_protocol import errors
from mcp_protocol.context import LOG_LEVELS
from mcp_protocol.jsonrpc import Request
from servers import methods

from ..agents import routing as agents_routing
from . import inner_calls, sessions, tasks
from .context import SessionContext
from .gate import Gate


async def ping(gate: Gate, request: Request, ctx: SessionContext) -> dict[str, Any]:
    return {}


async def set_level(gate: Gate, request: Request, ctx: SessionContext) -> dict[str, Any]:
    level = request.params.get("level")
    if level not in LOG_LEVELS:
        raise errors.invalid_params(f"Unknown log level: {level!r}")
    assert gate.session is not None  # the session era's methods run in their session
    await sessions.set_log_level(gate.redis, gate.session.sid, level)
    return {}


def _uri(request: Request) -> str:
    uri = request.params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise errors.invalid_params("params.uri is required")
    return uri


async def subscribe(gate: Gate, request: Request, ctx: SessionContext) -> dict[str, Any]:
    assert gate.session is not None
    await sessions.subscribe(gate.redis, gate.session, _uri(request))
    return {}


async def unsubscribe(gate: Gate, request: Request, ctx: SessionContext) -> dict[str, Any]:
    assert gate.session is not None
    await sessions.unsubscribe(gate.redis, gate.session, _uri(request))
    return {}


async def core(gate: Gate, request: Request, ctx: SessionContext) -> dict[str, Any]:
    if request.method in ("tools/list", "resources/read"):
        # Discovery's list and kept results' pages (gateway/agents/).
        kept = await agents_routing.before(gate, request, ctx)
        if kept is not None:
            return kept
    assert gate.snapshot is not None  # admitted
    result = await methods.call_method(gate.snapshot, request.method, request.params, ctx)
    return await agents_routing.after(gate, request, result)


async def tools_call(gate: Gate, request: Request, ctx: SessionContext) -> dict[str, Any]:
    """The platform's own tools and long calls (gateway/agents/) first; then a task-augmented
    call becomes a task; any other runs the ordinary way."""
    result = await agents_routing.before(gate, request, ctx, inner=inner_calls.tools_call)
    if result is not None:
        return result
    result = await tasks.session_call(gate, request, ctx)
    if result is not None:
        return result
    return await core(gate, request, ctx)


async def task_method(gate: Gate, request: Request, ctx: SessionContext) -> dict[str, Any]:
    result = await tasks.session_call(gate, request, ctx)
    if result is None:
        raise errors.method_not_found(request.method)
    return result
