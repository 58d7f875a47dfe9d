"""Test runs: one call of a tool with sample arguments and the server's test secrets, returning
what a person needs to debug it: the outbound request (secrets masked), the raw response, the
MCP result and the timing. The dashboard, the REST API and `manage.py tool test` call this.

The call goes through the same snapshot compilation and `tools/call` method as live traffic, so
argument and output validation behave as they will for clients; the tool may be disabled.
"""

import time
from collections.abc import Mapping
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.db.models import Q

from mcp_protocol.caller import Caller
from mcp_protocol.context import NullContext
from mcp_protocol.errors import McpError

from . import kinds, methods, secret_reach
from .definition import export_definition
from .snapshot import DefinitionError, compile_definition


class TestRunContext(NullContext):
    """A context without a client that asks the http kind for test secrets and a trace."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(self, client_headers: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.use_test_secrets = True
        self.http_trace: list[dict[str, Any]] = []
        # Code tools: each host call (function, masked arguments, ms) and what the code printed.
        self.host_calls: list[dict[str, Any]] = []
        self.printed: list[dict[str, Any]] = []
        self.client_headers = {k.lower(): v for k, v in (client_headers or {}).items()}


class UnknownTool(LookupError):
    pass


def _snapshot_for(server, definition: dict, tool: dict):
    single = {**definition, "tools": [{**tool, "enabled": True}]}
    for key in ("resources", "resourceTemplates", "prompts"):
        single.pop(key, None)
    return compile_definition(
        single,
        server_id=server.pk,
        organization_id=server.organization_id,
        generation="test-run",
        owner_id=server.organization.billing_owner_id,
    )


def _secrets_used(server, tool: dict) -> list[dict]:
    """Which secrets the tool names, and whether the run had a test value for each (without
    one it used the live value) or none at all."""
    from vault.models import Secret

    from .kinds.http import referenced_secrets

    names = referenced_secrets(tool.get("config") or {})
    rows = Secret.objects.filter(organization_id=server.organization_id, name__in=names).filter(
        Q(server__isnull=True) | Q(server=server)
    )
    has_test = {}
    for row in sorted(rows, key=lambda r: r.server_id is not None):  # the server's own win
        has_test[row.name] = bool(row.test_ciphertext)
    return [
        {
            "name": name,
            "value": "missing" if name not in has_test else ("test" if has_test[name] else "live"),
        }
        for name in sorted(names)
    ]


async def _masker(server):
    from vault.masking import Masker
    from vault.resolve import asecrets_for

    live = await asecrets_for(server.organization_id, server.pk)
    test = await asecrets_for(server.organization_id, server.pk, test=True)
    return Masker([*live.values(), *test.values()])


async def test_run(
    server, tool_name: str, arguments: dict, *, user=None, client_headers=None
) -> dict:
    """Run `tool_name` of `server` once as `user` (None: an operator's command); raises
    UnknownTool, DefinitionError if it cannot compile, or secret_reach.ReachNotApproved when
    the tool reads secrets nobody approved and `user` may not. Tool failures are part of the
    report, not exceptions."""
    # The draft is what its author is editing and wants to try, published or not.
    definition = await sync_to_async(export_definition)(server)
    tool = next((t for t in definition.get("tools") or [] if t.get("name") == tool_name), None)
    if tool is None:
        raise UnknownTool(f"The server {server.slug} has no tool named {tool_name!r}.")
    await sync_to_async(secret_reach.require_approved)(
        server=server, definition=definition, user=user, tool=tool_name
    )
    snapshot = await sync_to_async(_snapshot_for)(server, definition, tool)
    ctx = TestRunContext(client_headers)
    if user is not None:
        # The person trying the tool: a tool with a connection acts as their connected
        # account (or tells them how to connect), as their own calls would.
        ctx.caller = Caller(
            organization_id=server.organization_id,
            principal="person",
            principal_id=user.pk,
            role="",
            credential_kind="none",
            credential_id=None,
        )
    masker = await _masker(server)
    started = time.perf_counter()
    report: dict = {
        "tool": tool_name,
        "kind": tool.get("kind", kinds.DEFAULT_KIND),
        "arguments": arguments,
    }
    try:
        report["result"] = await methods.tools_call(
            snapshot, {"name": tool_name, "arguments": arguments}, ctx
        )
    except McpError as exc:
        report["error"] = exc.to_dict()
    total_ms = (time.perf_counter() - started) * 1000
    exchanges = ctx.http_trace
    responses = [e["response"] for e in exchanges if "response" in e]
    report["exchanges"] = exchanges
    report["request"] = exchanges[-1]["request"] if exchanges else None
    report["response"] = responses[-1] if responses else None
    report["timing"] = {
        "totalMs": round(total_ms, 1),
        "upstreamMs": round(sum(r.get("elapsedMs", 0) for r in responses), 1),
        "attempts": len(exchanges),
    }
    report["secrets"] = await sync_to_async(_secrets_used)(server, tool)
    report["logs"] = ctx.logs
    report["progress"] = ctx.progress_events
    kind = kinds.find_kind(report["kind"])
    if kind is not None and kind.reports_host_calls:
        report["hostCalls"] = ctx.host_calls
        report["printed"] = ctx.printed
    return masker.mask_data(report)


def test_run_sync(server, tool_name: str, arguments: dict, **kwargs) -> dict:
    return async_to_sync(test_run)(server, tool_name, arguments, **kwargs)


__all__ = ["DefinitionError", "TestRunContext", "UnknownTool", "test_run", "test_run_sync"]


# Names starting with test_ would otherwise be collected by pytest where they are imported.
test_run.__test__ = False  # type: ignore[attr-defined]
test_run_sync.__test__ = False  # type: ignore[attr-defined]
