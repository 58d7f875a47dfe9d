"""What the layers around the core dispatcher read of an admitted request (discovery and its
meta-tools, long calls, code mode, tasks, output budgets, MRTR): one typed value, made by the
endpoint once the request is admitted. No layer sees the endpoint's hold on the HTTP request.

In: the pipeline's outcome (the narrowed server, the caller, the credential's limits) and the
record stage's `Call`. Read by every layer; a code-mode program's tool calls go through
`call_tool`, which the endpoint binds (gateway/endpoint/inner_calls.py)."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from mcp_protocol.caller import Caller
from mcp_protocol.context import RequestContext
from servers.snapshot import Snapshot

from .credentials import Credential
from .record import Call

# (ctx, name, arguments) -> the result of the caller's own tools/call, made inside another call.
InnerCall = Callable[[RequestContext, str, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Served:
    snapshot: Snapshot  # the server as the caller sees it (narrowed)
    caller: Caller
    credential: Credential  # the caller's limits: what an inner call is charged against
    redis: Redis
    record: Call  # what the record stage needs of this request's calls
    # The URL asks tools/list for every tool, meta-tools or not (gateway/agents/routing.py).
    full_list: bool
    call_tool: InnerCall
