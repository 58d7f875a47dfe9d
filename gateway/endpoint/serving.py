"""The endpoint's admitted request as the dispatch layers read it: `served(gate)` is the one
place a `Gate` becomes a typed `Served` (gateway/pipeline/served.py)."""

from functools import partial

from mcp_protocol.jsonrpc import Request

from ..agents import routing as agents_routing
from ..pipeline.served import Served
from . import inner_calls
from .gate import Gate
from .session_methods import SessionCall
from .sessions import Session


def session_request(gate: Gate, session: Session, request: Request) -> SessionCall:
    """A session-era request as its handler takes it: a meta-call routed to the call it names
    (gateway/agents/routing.py), with the context the tool sees."""
    admitted = served(gate)
    context = gate.context(request)
    return SessionCall(admitted, session, agents_routing.route(admitted, request), context)


def served(gate: Gate) -> Served:
    assert gate.snapshot is not None  # only an admitted request is dispatched
    key, value = agents_routing.FULL_LIST_QUERY
    return Served(
        snapshot=gate.snapshot,
        caller=gate.caller,
        credential=gate.credential,
        redis=gate.redis,
        record=gate.call(),
        full_list=value in (gate.request.query.get(key) or []),
        call_tool=partial(inner_calls.tools_call, gate),
    )
