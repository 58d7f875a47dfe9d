"""The pipeline's admission, in its order: authenticate -> resolve the caller -> narrow the
server to what the caller may see -> charge. Every surface runs it (streamable HTTP in both eras,
legacy HTTP+SSE, REST /tools/<name>, Webtools, the documents); then dispatch, then record.

`admit` runs once per HTTP request; `admit_calls` once per message it carries, when the body
has been read (what an OAuth token's scopes allow, and the quotas of the tools it calls)."""

from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from mcp_protocol.caller import Caller
from mcp_protocol.jsonrpc import Request
from servers.snapshot import Snapshot

from . import charge
from .arrival import Arrival
from .authenticate import authenticate
from .caller import resolve
from .credentials import Credential
from .narrow import narrow, require_scope, scope_refusal
from .refused import Denied, Refused, refusal


@dataclass(frozen=True, slots=True)
class Admitted:
    # The server as this caller sees it (None only for a preflight to a slug with no server).
    snapshot: Snapshot | None
    credential: Credential  # the caller's governance: access limits, role, call limits
    caller: Caller
    session_data: dict[bytes, bytes] | None  # the mirror's hash of the request's session, if any
    watched: bool


async def admit(
    redis: Redis, arrival: Arrival, *, preflight: bool = False, methods: tuple[str, ...] = ()
) -> Admitted:
    """`methods`: what the request is known to ask before its body is read (REST and Webtools
    calls: tools/call), whose scope is checked with the narrowing."""
    authenticated = await authenticate(redis, arrival, preflight=preflight)
    if isinstance(authenticated, Denied):
        raise refusal(authenticated, arrival.slug)
    credential = authenticated.credential
    caller = resolve(credential)
    snapshot = authenticated.snapshot
    if snapshot is None or preflight:
        return Admitted(snapshot, credential, caller, None, authenticated.watched)
    # Decided before the charge, raised after it: a request its token's scopes refuse is
    # still counted against the server's rate limit, which answers first.
    lacking = scope_refusal(snapshot, credential, methods)
    snapshot = narrow(snapshot, credential)
    try:
        await charge.request(redis, snapshot, credential)
        if lacking is not None:
            raise lacking
    except Refused as refused:
        refused.snapshot, refused.origin_ok = snapshot, True
        refused.watched = authenticated.watched
        raise
    return Admitted(snapshot, credential, caller, authenticated.session_data, authenticated.watched)


async def admit_calls(redis: Redis, admitted: Admitted, parsed: Any) -> None:
    """The scope and quota checks of a message (a parsed JSON-RPC body, or the tool names a
    REST or Webtools call gives)."""
    snapshot = admitted.snapshot
    assert snapshot is not None  # only an admitted request's messages come here
    methods = requested_methods(parsed)
    require_scope(snapshot, admitted.credential, methods)
    await charge.calls(redis, snapshot, admitted.credential, parsed)


def requested_methods(parsed: Any) -> list[str]:
    messages = parsed if isinstance(parsed, list) else [parsed]
    return [
        "tools/call" if isinstance(m, str) else m.method
        for m in messages
        if isinstance(m, (Request, str))
    ]
