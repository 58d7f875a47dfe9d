"""The handlers of the core methods in the stateless era (the method table is ../dispatch.py)."""

from typing import Any

from mcp_protocol.errors import InputRequired
from servers import methods

from ...agents import routing as agents_routing
from .. import inner_calls
from .request_state import input_required
from .responder import StatelessCall
from .results import discover


async def run_discover(call: StatelessCall) -> dict[str, Any]:
    assert call.gate.snapshot is not None  # admitted
    return discover(call.gate.snapshot)


async def run_method(call: StatelessCall) -> dict[str, Any]:
    request = call.request
    if request.method in ("tools/list", "tools/call", "resources/read"):
        # Discovery, platform tools, long calls and kept results (gateway/agents/).
        result = await agents_routing.before(
            call.gate, request, call.context, inner=inner_calls.tools_call
        )
        if result is not None:
            return result
    result = await methods.call_method(
        call.gate.snapshot, request.method, request.params, call.context
    )
    return await agents_routing.after(call.gate, request, result)


async def run_mrtr(call: StatelessCall) -> dict[str, Any]:
    try:
        return await run_method(call)
    except InputRequired as exc:
        return input_required(call.gate, call.request, exc, call.context)
