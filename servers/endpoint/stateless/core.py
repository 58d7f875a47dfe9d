"""The handlers of the core methods in the stateless era (the method table is ../dispatch.py)."""

from mcp_protocol.errors import InputRequired

from ... import methods
from .request_state import input_required
from .responder import StatelessCall
from .results import discover


async def run_discover(call: StatelessCall) -> dict:
    return discover(call.gate.snapshot)


async def run_method(call: StatelessCall) -> dict:
    return await methods.call_method(
        call.gate.snapshot, call.request.method, call.request.params, call.context
    )


async def run_mrtr(call: StatelessCall) -> dict:
    try:
        return await run_method(call)
    except InputRequired as exc:
        return input_required(call.gate, call.request, exc, call.context)
