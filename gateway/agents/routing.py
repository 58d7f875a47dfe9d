"""The hooks the MCP endpoint calls, the same in every era and transport:

- `route(gate, request)` before dispatch: a `getmcp_call_tool` call becomes the ordinary
  tools/call of the tool it names (so validation, logging, rate limits, scopes, tasks and
  budgets treat it exactly as a direct call), and `?tools=all` on the URL becomes the
  full-list flag of a tools/list.
- `before(gate, request, ctx)`: answers the platform's own tools (search, describe, the long-call
  tools), long calls, and resources/read of kept results; None for everything else.
- `after(gate, request, result)`: the output budget of a tools/call result.
- tools/list (in `before`): the meta-tools instead of every tool on a big server.

`before` takes `inner`, the endpoint's hook for a call made inside a request (a code-mode
program's call_tool: codemode.py); a caller that passes none offers no code mode.
"""

from dataclasses import replace

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import INVALID_PARAMS, McpError, ToolError
from mcp_protocol.jsonrpc import Request
from servers import methods

from . import budgets, codemode, discovery, longcalls, results

FULL_LIST_QUERY = ("tools", "all")


def route(gate, request):
    if not isinstance(request, Request):
        return request
    params = request.params if isinstance(request.params, dict) else {}
    if request.method == "tools/list" and _url_asks_full_list(gate):
        meta = dict(params.get("_meta") or {}) if isinstance(params.get("_meta"), dict) else {}
        meta[discovery.FULL_LIST_META] = True
        return replace(request, params={**params, "_meta": meta})
    if request.method != "tools/call" or not discovery.is_meta_call(
        gate.snapshot, params.get("name")
    ):
        return request
    if params.get("name") != discovery.CALL:
        return request
    try:
        name, arguments = discovery.call_target(params.get("arguments"))
    except ToolError:
        return request  # before() answers the malformed meta-call with a tool error
    routed = {key: value for key, value in params.items() if key not in ("name", "arguments")}
    return replace(request, params={**routed, "name": name, "arguments": arguments})


def route_all(gate, parsed):
    if isinstance(parsed, list):
        return [route(gate, message) for message in parsed]
    return route(gate, parsed)


def _url_asks_full_list(gate) -> bool:
    key, value = FULL_LIST_QUERY
    return value in (gate.request.query.get(key) or [])


def list_tools(snapshot, params: dict, ctx: RequestContext) -> list:
    extra = longcalls.TOOLS if longcalls.offered(snapshot, ctx, params) else ()
    return discovery.listed_tools(snapshot, params, (*codemode.listed(snapshot, params), *extra))


def provided(snapshot, name) -> bool:
    """A platform tool (meta or long-call) that this server does not define itself."""
    return isinstance(name, str) and (
        ((name in discovery.META_NAMES or name in longcalls.NAMES) and name not in snapshot.tools)
        or codemode.is_call(snapshot, name)
    )


def talks_to_client(snapshot, request) -> bool:
    """Calls that may send progress before they answer (so they get a stream)."""
    if request.method != "tools/call":
        return False
    name = request.params.get("name")
    if provided(snapshot, name):
        return name in (longcalls.RESULT, codemode.RUN)
    tool = snapshot.tools.get(name) if isinstance(name, str) else None
    return longcalls.eligible(snapshot, tool)


async def before(gate, request, ctx: RequestContext, inner=None) -> dict | None:
    params = request.params
    if request.method == "tools/list":
        return methods.page(list_tools(gate.snapshot, params, ctx), params, "tools")
    if request.method == "resources/read" and budgets.is_result_uri(params.get("uri")):
        page = await results.read_page(
            gate.redis,
            params["uri"],
            server_id=gate.snapshot.server_id,
            credential=gate.credential.ident,
        )
        if page is None:
            raise McpError(INVALID_PARAMS, "Resource not found", {"uri": params["uri"]})
        return page
    if request.method != "tools/call":
        return None
    name = params.get("name")
    snapshot = gate.snapshot
    if provided(snapshot, name):
        arguments = params.get("arguments") or {}
        try:
            result = await _provided_call(gate, snapshot, name, arguments, ctx, inner)
        except ToolError as exc:
            return {"content": [{"type": "text", "text": exc.message}], "isError": True}
        return await after(gate, request, result, tool=None)
    long_result = await longcalls.maybe_call(gate, request, ctx)
    if long_result is None:
        return None
    return await after(gate, request, long_result)


async def _provided_call(
    gate, snapshot, name: str, arguments, ctx: RequestContext, inner=None
) -> dict:
    if not isinstance(arguments, dict):
        raise ToolError("Tool arguments must be an object")
    if name == codemode.RUN:
        return await codemode.run(gate, arguments, ctx, inner)
    if name == discovery.SEARCH:
        return await discovery.search(snapshot, arguments)
    if name == discovery.DESCRIBE:
        return discovery.describe(snapshot, arguments)
    if name == discovery.CALL:
        # route() rewrote every well-formed meta-call; this one names no callable tool.
        discovery.call_target(arguments)
        raise ToolError(f"{discovery.CALL} cannot call {arguments.get('name')!r} through itself")
    return await longcalls.call_provided(gate, name, arguments, ctx)


async def after(gate, request, result, tool=...) -> dict:
    if request.method != "tools/call" or not isinstance(result, dict):
        return result
    if result.get("resultType") not in (None, "complete") or "task" in result:
        return result  # a task was created, or the client must answer first
    snapshot = gate.snapshot
    if tool is ...:
        name = request.params.get("name")
        tool = snapshot.tools.get(name) if isinstance(name, str) else None
    return await budgets.apply(
        gate.redis, snapshot, tool, request.params, result, credential=gate.credential.ident
    )
