"""The per-call stages of a tool called by name (REST `/tools/<name>`, Webtools), once the
request is admitted and its body read: scope and quotas (admission.admit_calls), dispatch to the
surface's form of the core method (gateway/surfaces), record. In that order, here alone; the
transport (gateway/endpoint/surfaces.py) only reads the body and frames the answer.

In: the `Admitted` request and a `NamedCall`. Out: the HTTP status and the surface's payload."""

import time
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from mcp_protocol.context import NullContext, RequestContext

from ..surfaces import rest, webtools
from .admission import Admitted, admit_calls
from .record import Call, record


@dataclass(frozen=True, slots=True)
class NamedCall:
    call: Call  # who calls which server, through which surface (rest | webtools)
    tool: str | None  # the tool it names (Webtools: the body's action; None when it names none)
    arguments: Any  # what the tool is given (Webtools: the body's request)
    body: Any  # the body as it came: Webtools checks it whole


async def rest_call(
    redis: Redis, admitted: Admitted, named: NamedCall
) -> tuple[int, dict[str, Any]]:
    await admit_calls(redis, admitted, [named.tool])
    call = named.call
    started = time.perf_counter()
    assert named.tool is not None  # the path names the tool
    context = NullContext(caller=call.caller)  # nobody listens for progress or answers here
    status, payload = await rest.call_tool_rest(call.snapshot, named.tool, named.body, context)
    reply = {"result": {}} if status == 200 else {"error": {"message": payload.get("error", "")}}
    _record(named, reply, started=started, context=context)
    return status, payload


async def webtools_call(
    redis: Redis, admitted: Admitted, named: NamedCall
) -> tuple[int, dict[str, Any]]:
    await admit_calls(redis, admitted, [named.tool])
    call = named.call
    started = time.perf_counter()
    context = NullContext(caller=call.caller)  # nobody listens for progress or answers here
    status, payload = await webtools.execute(call.snapshot, named.body, context)
    reply = {"result": {}} if status == 200 else {"error": {"message": str(payload.get("error"))}}
    _record(named, reply, started=started, context=context)
    return status, payload


def _record(
    named: NamedCall, reply: dict[str, Any], *, started: float, context: RequestContext
) -> None:
    """The call's row, naming the connected accounts (connections/) the tool acted through, as
    an MCP call's row does."""
    params = {"name": named.tool, "arguments": named.arguments}
    record(named.call, "tools/call", params, reply, started, connections=context.connections_used)
