"""The stateless era's own handlers and dispatch layer (the method table is ../dispatch.py)."""

from typing import Any

from mcp_protocol.errors import InputRequired

from ...pipeline.dispatch import Handler
from .request_state import input_required
from .responder import StatelessCall
from .results import discover


async def run_discover(call: StatelessCall) -> dict[str, Any]:
    return discover(call.snapshot)


async def mrtr_layer(call: StatelessCall, inner: Handler) -> dict[str, Any]:
    """The dispatch layer of multi round-trip requests: a question the client has not answered
    yet ends this round with InputRequired, its answers sealed in requestState."""
    try:
        return await inner(call)
    except InputRequired as exc:
        return input_required(call.served, call.request, exc, call.context)
