"""Code mode: under progressive discovery, one meta-tool runs a short Python program of the agent
that calls the server's tools, so a job of several steps costs the agent one call and one
result instead of a request and a full result per step.

    agents:
      discovery: {mode: on}
      codeMode: {enabled: true, limits: {wallSeconds: 20}}   # limits: as a code tool's

The program runs in the code tools' sandbox (servers/kinds/code/: a Monty worker, never this
process) under the same limits, fair shares by paying account and parking while it waits for a
tool. It can do less than a code tool, on purpose: it is the caller's code, not the owner's, so
it sees no secrets and may not fetch, elicit or sample: it calls the server's tools (and logs).

Each `call_tool` inside is a tools/call of the caller's own: the endpoint's inner-call hook
(gateway/endpoint/inner_calls.py, bound as the request's `Served.call_tool`) charges quotas, runs the
call through servers.methods.tools_call on the caller's narrowed snapshot (access, validation),
and writes its call-log row and inspector event, as for a direct call.
"""

import functools
import re
from typing import Any

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import ToolError
from servers.kinds import calling
from servers.kinds.code import python_source
from servers.kinds.code.host import Host, SandboxException
from servers.kinds.code.limits import Limits
from servers.kinds.code.result import to_result
from servers.kinds.code.runtime import OUTPUT_CHECK, LimitExceeded, Run, driver
from servers.kinds.code.tool import CodeTool

from ..pipeline.served import Served
from . import discovery

RUN = "getmcp_run_code"
NAMES = frozenset({RUN})
# `async def main():` (or `def main():`), the shape the description teaches.
NO_ARGUMENT_MAIN = re.compile(r"^(async[ \t]+)?def[ \t]+main[ \t]*\([ \t]*\)", re.MULTILINE)
REFUSED = ("fetch", "elicit", "sample")
STOPPED = "The program was stopped"


def offered(snapshot) -> bool:
    return snapshot.agents.code_mode and discovery.active(snapshot) and RUN not in snapshot.tools


def is_call(snapshot, name) -> bool:
    return name == RUN and offered(snapshot)


def listed(snapshot, params: dict) -> tuple:
    """The meta-tool, when tools/list shows discovery's meta-tools (not the full list)."""
    if not offered(snapshot) or discovery.wants_full_list(params):
        return ()
    return (wire(limits_of(snapshot)),)


@functools.lru_cache(maxsize=256)
def limits_of_settings(pairs: tuple) -> Limits:
    return Limits.from_config(dict(pairs))


def limits_of(snapshot) -> Limits:
    return limits_of_settings(snapshot.agents.code_mode_limits)


@functools.lru_cache(maxsize=256)
def wire(limits: Limits) -> dict:
    """The meta-tool as tools/list shows it; its description is all the agent learns of it."""
    description = f"""Run a short Python program that calls this server's tools and returns \
one result: a job of several steps (look something up, then use it in the next call, filter, \
add up) in one call, where only what the program returns comes back to you.

Shape: define `async def main():` and `return` the result. Inside it, \
`await call_tool(name, arguments)` calls one tool of this server (find names with \
{discovery.SEARCH}, arguments with {discovery.DESCRIBE}) and returns the tool's result as a \
dict: {{"content": [{{"type": "text", "text": "..."}}], "structuredContent": {{...}} (when the \
tool gives one), "isError": True (when the tool failed, e.g. invalid arguments; its text says \
why)}}. A tool this server does not have, or that you may not use, raises ValueError; a call \
over a quota or rate limit raises RuntimeError (both can be caught). `log("text")` sends a log \
message. What main returns becomes this call's result: a str as text, a dict as \
structuredContent with its JSON as text, None as empty text, anything else as JSON text.

Example:
async def main():
    found = await call_tool("listOrders", {{"status": "open"}})
    orders = found["structuredContent"]["items"]
    late = [o["id"] for o in orders if o["late"]]
    for order_id in late:
        await call_tool("cancelOrder", {{"id": order_id}})
    return {{"cancelled": late}}

The language is Python run by a sandboxed interpreter (Monty): functions, loops, \
comprehensions, str/list/dict methods, try/except, f-strings, `import json`, `import re`; \
no files, no network (only call_tool), no other imports, no classes of your own. Limits per \
program: {limits.wall_seconds:g} s in all, {limits.cpu_seconds:g} s of CPU, \
{limits.memory_mb} MB of memory, {limits.host_calls} calls of call_tool and log, a result of \
{limits.output_bytes} bytes; past one, the program stops with an error naming the limit. \
Each call_tool counts as a call of that tool (quotas, access and the call log as if you had \
called it yourself)."""
    return {
        "name": RUN,
        "title": "Run a program that calls this server's tools",
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "maxLength": python_source.MAX_SOURCE_BYTES,
                    "description": "A Python module that defines `async def main():`.",
                }
            },
            "required": ["code"],
        },
        "annotations": {"openWorldHint": False},
    }


# -- running a program ------------------------------------------------------------------------------


class _ProgramHost(Host):
    """The code tools' host functions minus those that reach past the server's tools."""

    async def call(self, name: str, args: tuple, kwargs: dict) -> Any:
        if name in REFUSED:
            raise SandboxException(
                "PermissionError",
                f"{name} is not available in {RUN}: the program may only call this server's "
                "tools (call_tool) and log",
            )
        return await super().call(name, args, kwargs)

    async def _call_tool(self, name: Any, arguments: Any = None) -> dict:
        """Every call goes to the inner-call hook, an unknown or withheld name too: it is
        refused (and logged) there exactly as the same direct call would be."""
        if not isinstance(name, str):
            raise SandboxException("TypeError", "call_tool: name must be a string")
        if arguments is not None and not isinstance(arguments, dict):
            raise SandboxException("TypeError", "call_tool: arguments must be a dict")
        current = calling.current.get()
        assert current is not None  # run() sets it around the whole program
        params = {"name": name, "arguments": arguments or {}}
        return await current.tools_call(current.snapshot, params, self.ctx)


class _ProgramRun(Run):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.host = _ProgramHost(self)


def program_of(source: Any) -> tuple[str, int]:
    """(the program fed to the sandbox, the lines of the agent's own source); ToolError when
    the source has no usable main. Only measured and searched here, never parsed (see
    python_source): the sandbox's parser reports syntax errors."""
    if not isinstance(source, str) or not source.strip():
        raise ToolError(f"{RUN}: the code must define `async def main():` returning the result")
    if len(source.encode()) > python_source.MAX_SOURCE_BYTES:
        raise ToolError(f"{RUN}: code longer than {python_source.MAX_SOURCE_BYTES // 1024} KB")
    lines = source.rstrip().count("\n") + 1
    found = list(NO_ARGUMENT_MAIN.finditer(source))
    if found:
        awaiting = "await " if found[-1].group(1) else ""
        return source.rstrip() + f"\n\n_getmcp_result = {awaiting}main()\n" + OUTPUT_CHECK, lines
    problems, entry = python_source.check(source)
    if entry is None:
        where = f" ({problems[0]})" if problems and problems[0].startswith("line") else ""
        raise ToolError(
            f"{RUN}: the code must define `async def main():` returning the result (at the "
            f"top level){where}"
        )
    return source.rstrip() + "\n" + driver(entry), lines


async def run(served: Served, arguments: dict, ctx: RequestContext) -> dict:
    """The result of one program: what main returned, or a tool error (a limit, an exception
    the program did not catch, a source that does not parse)."""
    from vault.masking import Masker

    unknown = sorted(set(arguments) - {"code"})
    if unknown:
        raise ToolError(f"{RUN} takes only `code` (not {', '.join(unknown)})")
    source, user_lines = program_of(arguments.get("code"))
    snapshot = served.snapshot
    limits = limits_of(snapshot)
    tool = CodeTool(
        name=RUN,
        language="python",
        source=source,
        entry=None,
        user_lines=user_lines,
        limits=limits,
        secret_names=frozenset(),  # the caller's program sees none of the owner's secrets
        organization_id=snapshot.organization_id,
        server_id=snapshot.server_id,
        has_output_schema=False,
        owner_id=snapshot.owner_id,
    )

    async def tools_call(scoped, params: dict, call_ctx: RequestContext) -> dict:
        return await served.call_tool(call_ctx, params["name"], params.get("arguments") or {})

    masker = Masker(())
    program = _ProgramRun(tool, {}, ctx, masker, {})
    token = calling.current.set(calling.Calling(snapshot, tools_call))
    try:
        value = await program.execute(
            source,
            {
                "tool": RUN,
                "protocolVersion": ctx.protocol_version,
                "client": ctx.client_info,
                "isTest": False,
                "outputBytes": limits.output_bytes,
            },
        )
    except LimitExceeded as exc:
        raise ToolError(exc.message.replace("The code tool was stopped", STOPPED)) from None
    finally:
        calling.current.reset(token)
    return to_result(value, has_output_schema=False, masker=masker, max_bytes=limits.output_bytes)
