"""Calls made inside an answered request: a code-mode program's `call_tool`
(gateway/agents/codemode.py). Each is the caller's own tools/call, treated as a direct one:

- access: it runs on the gate's snapshot, already narrowed to what the credential may use
  (servers/access.py), so a withheld tool is answered "Unknown tool" as it would be directly;
- quotas and limits: charged like a direct call (servers/quotas.py), one counter step each;
- validation and the run: servers.methods.tools_call, the one every surface ends in;
- the call log (the pipeline's record stage, naming the connected accounts the call acted
  through) and the live inspector (an event per call, naming the meta-call it was made in).

What the program sees: the tool's result (a tool error is a result with isError, as for a
direct call); a JSON-RPC error (unknown or withheld tool) raises ValueError and a quota or rate
limit RuntimeError, both exceptions the program may catch.
"""

import itertools
import time
from typing import Any

from inspector import publish as inspector
from mcp_protocol.context import RequestContext
from mcp_protocol.errors import McpError
from mcp_protocol.jsonrpc import error_message, result_message
from servers import methods
from servers.kinds.code.host import SandboxException

from ..pipeline import charge
from ..pipeline.record import record
from ..pipeline.refused import Refused
from .gate import Gate

VIA = "getmcp_run_code"
_ids = itertools.count(1)


async def tools_call(
    gate: Gate, ctx: RequestContext, name: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    assert gate.snapshot is not None  # only an admitted request runs a program
    started = time.perf_counter()
    request_id = f"{VIA}-{next(_ids)}"
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    status = 200
    raised: SandboxException | None = None
    used: tuple[str, ...] = ()  # the connected accounts the call acted through
    try:
        await charge.calls(gate.redis, gate.snapshot, gate.credential, [name])
    except Refused as over:
        status = over.status
        reply = error_message(request_id, McpError(over.error.code, over.error.message))
        raised = SandboxException("RuntimeError", f"call_tool({name!r}): {over.error.message}")
    else:
        # The program's calls share the meta-call's context: this one starts with no connected
        # accounts (connections/), so its row names those it acted through, even one an earlier
        # call used already; the meta-call's row then names them all (host calls come one at a
        # time, so nothing else runs on the context meanwhile).
        outer, ctx.connections_used = ctx.connections_used, ()
        try:
            reply = result_message(request_id, await methods.tools_call(gate.snapshot, params, ctx))
        except McpError as exc:
            reply = error_message(request_id, exc)
            raised = SandboxException("ValueError", f"call_tool({name!r}): {exc.message}")
        finally:
            used = ctx.connections_used
            ctx.connections_used = _joined(outer, used)
    record(gate.call(), "tools/call", params, reply, started, connections=used)
    inspector.inner_call(
        gate,
        request={"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params},
        reply=reply,
        status=status,
        started=started,
        extra={"via": VIA},
    )
    if raised is not None:
        raise raised
    result: dict[str, Any] = reply["result"]
    return result


def _joined(outer: tuple[str, ...], used: tuple[str, ...]) -> tuple[str, ...]:
    """The meta-call's connected accounts, then those of its inner call it did not name yet."""
    return outer + tuple(label for label in used if label not in outer)
