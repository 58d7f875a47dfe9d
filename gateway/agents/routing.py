"""The hooks the MCP endpoint calls, the same in every era and transport:

- `route(served, request)` before dispatch: a `getmcp_call_tool` call becomes the ordinary
  tools/call of the tool it names (so validation, logging, rate limits, scopes, tasks and
  budgets treat it exactly as a direct call), and `?tools=all` on the URL becomes the
  full-list flag of a tools/list.
- the dispatch layers (gateway/endpoint/dispatch.py composes them per method): `layer` answers
  the platform's own tools (search, describe, code mode, the long-call tools) and long calls,
  `list_layer` tools/list (the meta-tools instead of every tool on a big server),
  `results_layer` resources/read of kept results, `budget_layer` the output budget of a
  tools/call result (budgets.hold).

Each takes the admitted request as a typed `Served` (gateway/pipeline/served.py), whose
`call_tool` is the endpoint's hook for a call made inside a request (a code-mode program's
call_tool: codemode.py).
"""

from dataclasses import replace

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import INVALID_PARAMS, McpError, ToolError
from mcp_protocol.jsonrpc import Request
from servers import methods

from ..pipeline.served import Served
from . import budgets, codemode, discovery, longcalls, results

FULL_LIST_QUERY = ("tools", "all")


def route(served: Served, request):
    if not isinstance(request, Request):
        return request
    params = request.params if isinstance(request.params, dict) else {}
    if request.method == "tools/list" and served.full_list:
        meta = dict(params.get("_meta") or {}) if isinstance(params.get("_meta"), dict) else {}
        meta[discovery.FULL_LIST_META] = True
        return replace(request, params={**params, "_meta": meta})
    if request.method != "tools/call" or not discovery.is_meta_call(
        served.snapshot, params.get("name")
    ):
        return request
    if params.get("name") != discovery.CALL:
        return request
    try:
        name, arguments = discovery.call_target(params.get("arguments"))
    except ToolError:
        return request  # layer() answers the malformed meta-call with a tool error
    routed = {key: value for key, value in params.items() if key not in ("name", "arguments")}
    return replace(request, params={**routed, "name": name, "arguments": arguments})


def route_all(served: Served, parsed):
    if isinstance(parsed, list):
        return [route(served, message) for message in parsed]
    return route(served, parsed)


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
    """Whether a call may send notifications or ask the client before it answers (so it gets a
    stream), decided once per request (gateway/endpoint/serving.py): a prompt with steps, a
    platform tool that does (a long call's result, code mode), a tool that runs as a long call,
    or a tool whose kind says it streams progress."""
    if request.method == "prompts/get":
        name = request.params.get("name")
        prompt = snapshot.prompts.get(name) if isinstance(name, str) else None
        return prompt is not None and bool(getattr(prompt, "steps", None))
    if request.method != "tools/call":
        return False
    name = request.params.get("name")
    if provided(snapshot, name):
        return name in (longcalls.RESULT, codemode.RUN)
    tool = snapshot.tools.get(name) if isinstance(name, str) else None
    return longcalls.eligible(snapshot, tool) or (tool is not None and tool.kind.streams_progress)


async def layer(call, inner) -> dict:
    """The dispatch layer of tools/call for discovery and long calls (gateway/pipeline/
    dispatch.py): a platform tool (meta-tool, code mode, a long call's tools) is answered by its
    handler in `PROVIDED`, a tool that runs as a long call by longcalls.py; every other call
    goes on inside. Takes the era's typed call (its `Served`, request and context)."""
    served, request = call.served, call.request
    name = request.params.get("name")
    tool = None  # a platform tool has no budget of its own
    if provided(served.snapshot, name):
        arguments = request.params.get("arguments") or {}
        try:
            if not isinstance(arguments, dict):
                raise ToolError("Tool arguments must be an object")
            result = await PROVIDED[name](served, name, arguments, call.context)
        except ToolError as exc:
            return {"content": [{"type": "text", "text": exc.message}], "isError": True}
    else:
        long_result = await longcalls.maybe_call(served, request, call.context)
        if long_result is None:
            return await inner(call)
        result = long_result
        tool = served.snapshot.tools.get(name) if isinstance(name, str) else None
    return await budgets.hold(served, request, result, tool=tool)


async def list_layer(call, inner) -> dict:
    """The dispatch layer of tools/list: the meta-tools instead of every tool on a big server,
    the long-call tools for a client without tasks, code mode's tool."""
    params = call.request.params
    return methods.page(list_tools(call.served.snapshot, params, call.context), params, "tools")


async def results_layer(call, inner) -> dict:
    """The dispatch layer of resources/read: a page of a result kept by its output budget."""
    params = call.request.params
    if not budgets.is_result_uri(params.get("uri")):
        return await inner(call)
    served = call.served
    page = await results.read_page(
        served.redis,
        params["uri"],
        server_id=served.snapshot.server_id,
        credential=served.caller.ident,
    )
    if page is None:
        raise McpError(INVALID_PARAMS, "Resource not found", {"uri": params["uri"]})
    return page


async def budget_layer(call, inner) -> dict:
    """The dispatch layer of output budgets: a tools/call result over budget is cut here."""
    return await budgets.hold(call.served, call.request, await inner(call))


async def _search(served: Served, name: str, arguments: dict, ctx: RequestContext) -> dict:
    return await discovery.search(served.snapshot, arguments)


async def _describe(served: Served, name: str, arguments: dict, ctx: RequestContext) -> dict:
    return discovery.describe(served.snapshot, arguments)


async def _meta_call(served: Served, name: str, arguments: dict, ctx: RequestContext) -> dict:
    # route() rewrote every well-formed meta-call; this one names no callable tool.
    discovery.call_target(arguments)
    raise ToolError(f"{discovery.CALL} cannot call {arguments.get('name')!r} through itself")


async def _run_code(served: Served, name: str, arguments: dict, ctx: RequestContext) -> dict:
    return await codemode.run(served, arguments, ctx)


# The platform's own tools (those `provided` says this server does not define itself), each
# answered by its handler: (served, name, arguments, ctx) -> the tools/call result.
PROVIDED = {
    codemode.RUN: _run_code,
    discovery.SEARCH: _search,
    discovery.DESCRIBE: _describe,
    discovery.CALL: _meta_call,
    **dict.fromkeys(longcalls.NAMES, longcalls.call_provided),
}
