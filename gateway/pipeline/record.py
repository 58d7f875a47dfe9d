"""Stage 6, record: an answered call becomes a call-log row (activity.recorder batches it), a
metric and, when tracing, its span's outcome.

In: a `Call` (what was asked, by whom, on which server, through which surface) and its reply.
The caller is the one stage 2 resolved; nothing here reads a key string."""

import time
from dataclasses import dataclass
from typing import Any

from activity.amendments import task_call_uid
from activity.recorder import record_call
from mcp_protocol.caller import Caller
from observability import metrics, tracing
from servers.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class Call:
    snapshot: Snapshot
    caller: Caller
    surface: str  # mcp | rest | webtools
    user_agent: str
    client_ip: str | None
    session_id: str = ""
    client_info: dict[str, Any] | None = None


def outcome_of(reply: dict[str, Any] | None) -> tuple[str, str]:
    if reply is None:
        return "error", "cancelled"
    if "error" in reply:
        return "error", reply["error"].get("message", "")
    result = reply.get("result")
    if isinstance(result, dict) and result.get("isError"):
        content = result.get("content") or []
        text = next((c.get("text", "") for c in content if c.get("type") == "text"), "")
        return "tool_error", text
    return "ok", ""


def record(
    call: Call,
    method: str,
    params: dict[str, Any],
    reply: dict[str, Any] | None,
    started: float,
    *,
    client_info: dict[str, Any] | None = None,
    connections: tuple[str, ...] = (),
    task_id: str = "",
) -> None:
    snapshot = call.snapshot
    caller = call.caller
    outcome, error = outcome_of(reply)
    seconds = time.perf_counter() - started
    metrics.observe_call(
        snapshot.slug, method, call.surface, error if reply is None else outcome, seconds
    )
    if tracing.ENABLED:
        tracing.annotate(method, params.get("name"), outcome, error)
    record_call(
        organization_id=snapshot.organization_id,
        server_id=snapshot.server_id,
        server_slug=snapshot.slug,
        surface=call.surface,
        method=method,
        tool=params.get("name")
        if method == "tools/call" and isinstance(params.get("name"), str)
        else None,
        api_key_id=caller.api_key_id,
        key_name=caller.credential_name,
        # The person the call acts as (a grant's, or a personal key's); a service account's
        # key is named by the key itself.
        user_id=caller.principal_id if caller.principal == "person" else None,
        oauth_client=caller.client,
        oauth_grant_id=caller.grant_id,
        client_info=client_info or call.client_info,
        user_agent=call.user_agent,
        client_ip=call.client_ip,
        outcome=outcome,
        error=error,
        latency_ms=seconds * 1000,
        arguments=params.get("arguments") if method == "tools/call" else None,
        log_arguments=snapshot.log_arguments,
        session_id=call.session_id,
        connection=", ".join(connections),
        # A call handed to a task: the row its worker names its connections in.
        uid=task_call_uid(task_id) if task_id else None,
    )
