"""One place that turns an answered request into a call-log row (activity.recorder batches it)."""

import time
from typing import Any

from activity.recorder import record_call
from observability import metrics, tracing

from .gate import Gate


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
    gate: Gate,
    method: str,
    params: dict[str, Any],
    reply: dict[str, Any] | None,
    started: float,
    *,
    surface: str = "mcp",
    client_info: dict[str, Any] | None = None,
) -> None:
    snapshot = gate.snapshot
    assert snapshot is not None  # only an admitted request's call is recorded
    credential = gate.credential
    outcome, error = outcome_of(reply)
    seconds = time.perf_counter() - started
    metrics.observe_call(
        snapshot.slug, method, surface, error if reply is None else outcome, seconds
    )
    if tracing.ENABLED:
        tracing.annotate(method, params.get("name"), outcome, error)
    session = gate.session
    record_call(
        organization_id=snapshot.organization_id,
        server_id=snapshot.server_id,
        server_slug=snapshot.slug,
        surface=surface,
        method=method,
        tool=params.get("name")
        if method == "tools/call" and isinstance(params.get("name"), str)
        else None,
        api_key_id=credential.key_id,
        key_name=credential.name if credential.key_id else "",
        user_id=credential.user_id,
        oauth_client=credential.client_name,
        oauth_grant_id=credential.grant_id,
        client_info=client_info or (session.client_info if session else None),
        user_agent=gate.request.header("user-agent", ""),
        client_ip=(gate.request.scope.get("client") or (None,))[0],
        outcome=outcome,
        error=error,
        latency_ms=seconds * 1000,
        arguments=params.get("arguments") if method == "tools/call" else None,
        log_arguments=snapshot.log_arguments,
        session_id=session.sid if session else "",
    )
