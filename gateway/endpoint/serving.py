"""The endpoint's admitted request as the dispatch layers read it: `served(gate)` is the one
place a `Gate` becomes a typed `Served` (gateway/pipeline/served.py)."""

from functools import partial

from mcp_protocol.jsonrpc import Request

from ..agents import routing as agents_routing
from ..pipeline.served import Served
from . import inner_calls, streams
from .gate import Gate
from .session_methods import SessionCall
from .sessions import Session


def session_request(
    gate: Gate,
    session: Session,
    request: Request,
    *,
    accepts_stream: bool = False,
    writer: streams.StreamWriter | None = None,
) -> SessionCall:
    """A session-era request as its handler takes it: a meta-call routed to the call it names
    (gateway/agents/routing.py), with the context the tool sees, and whether it may talk to
    the client before it answers, decided here once for every transport. The context writes
    to `writer` (legacy HTTP+SSE: the session's one stream) or, when the client accepts a
    stream and the call may talk to it, to a new stream of its own (streamable HTTP)."""
    admitted = served(gate)
    context = gate.context(request)
    routed = agents_routing.route(admitted, request)
    talks = agents_routing.talks_to_client(admitted.snapshot, routed)
    if writer is None and accepts_stream and (talks or routed.method == "tasks/result"):
        # tasks/result may put the task's questions to the client before it answers.
        writer = streams.StreamWriter(admitted.redis, session.sid, streams.new_stream_name())
    context.writer = writer
    return SessionCall(admitted, session, routed, context, talks_to_client=talks)


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
