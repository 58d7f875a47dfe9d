"""The hooks the MCP endpoint calls, the same in every era and transport:

- `route(served, request)` before dispatch: a `getmcp_call_tool` call becomes the ordinary
  tools/call of the tool it names (so validation, logging, rate limits, scopes, tasks and
  budgets treat it exactly as a direct call), and `?tools=all` on the URL becomes the
  full-list flag of a tools/list.
- `before(served, request, ctx)`: answers the platform's own tools (search, describe, the long-call
  tools), long calls, and resources/read of kept results; None for everything else.
- `after(served, request, result)`: the output budget of a tools/call result.
- tools/list (in `before`): the meta-tools instead of every tool on a big server.

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
        return request  # before() answers the malformed meta-call with a tool error
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
    """The dispatch layer of discovery and long calls (gateway/pipeline/dispatch.py): the
    platform's own tools, long calls, the meta-tools' tools/list and kept results' pages are
    answered here; every other call goes on inside."""
    answered = await before(call.served, call.request, call.context)
    if answered is not None:
        return answered
    return await inner(call)


async def budget_layer(call, inner) -> dict:
    """The dispatch layer of output budgets: a tools/call result over budget is cut here."""
    return await after(call.served, call.request, await inner(call))


async def before(served: Served, request, ctx: RequestContext) -> dict | None:
    params = request.params
    if request.method == "tools/list":
        return methods.page(list_tools(served.snapshot, params, ctx), params, "tools")
    if request.method == "resources/read" and budgets.is_result_uri(params.get("uri")):
        page = await results.read_page(
            served.redis,
            params["uri"],
            server_id=served.snapshot.server_id,
            credential=served.caller.ident,
        )
        if page is None:
            raise McpError(INVALID_PARAMS, "Resource not found", {"uri": params["uri"]})
        return page
    if request.method != "tools/call":
        return None
    name = params.get("name")
    if provided(served.snapshot, name):
        arguments = params.get("arguments") or {}
        try:
            result = await _provided_call(served, name, arguments, ctx)
        except ToolError as exc:
            return {"content": [{"type": "text", "text": exc.message}], "isError": True}
        return await after(served, request, result, tool=None)
    long_result = await longcalls.maybe_call(served, request, ctx)
    if long_result is None:
        return None
    return await after(served, request, long_result)


async def _provided_call(served: Served, name: str, arguments, ctx: RequestContext) -> dict:
    if not isinstance(arguments, dict):
        raise ToolError("Tool arguments must be an object")
    snapshot = served.snapshot
    if name == codemode.RUN:
        return await codemode.run(served, arguments, ctx)
    if name == discovery.SEARCH:
        return await discovery.search(snapshot, arguments)
    if name == discovery.DESCRIBE:
        return discovery.describe(snapshot, arguments)
    if name == discovery.CALL:
        # route() rewrote every well-formed meta-call; this one names no callable tool.
        discovery.call_target(arguments)
        raise ToolError(f"{discovery.CALL} cannot call {arguments.get('name')!r} through itself")
    return await longcalls.call_provided(served, name, arguments, ctx)


async def after(served: Served, request, result, tool=...) -> dict:
    if request.method != "tools/call" or not isinstance(result, dict):
        return result
    if result.get("resultType") not in (None, "complete") or "task" in result:
        return result  # a task was created, or the client must answer first
    snapshot = served.snapshot
    if tool is ...:
        name = request.params.get("name")
        tool = snapshot.tools.get(name) if isinstance(name, str) else None
    return await budgets.apply(
        served.redis, snapshot, tool, request.params, result, credential=served.caller.ident
    )
