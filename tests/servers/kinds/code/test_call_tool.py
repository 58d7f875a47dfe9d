"""call_tool: a code tool calls another tool of the same server, nested no deeper than the limit."""

from mcp_protocol.context import NullContext
from servers import methods
from servers.snapshot import compile_definition


def snapshot_with(*tools):
    return compile_definition(
        {"slug": "calls", "name": "calls", "tools": list(tools)},
        server_id=1,
        organization_id=1,
        generation="t",
    )


def code(name, source, **extra):
    return {"name": name, "kind": "code", "config": {"source": source}, **extra}


ECHO = {
    "name": "echo",
    "kind": "static",
    "config": {"content": [{"type": "text", "text": "echo {{ message }}"}]},
}


async def call(snapshot, name, arguments=None):
    return await methods.tools_call(
        snapshot, {"name": name, "arguments": arguments or {}}, NullContext()
    )


async def test_a_code_tool_calls_a_sibling_tool_and_uses_its_result():
    snapshot = snapshot_with(
        ECHO,
        code(
            "twice",
            "async def main(args, ctx):\n"
            "    first = await call_tool('echo', {'message': args['m']})\n"
            "    second = await ctx.call_tool('echo', {'message': 'again'})\n"
            "    return first['content'][0]['text'] + ' / ' + second['content'][0]['text']\n",
        ),
    )
    result = await call(snapshot, "twice", {"m": "hi"})
    assert result == {"content": [{"type": "text", "text": "echo hi / echo again"}]}


async def test_a_code_tool_calling_a_code_tool_needs_no_second_worker(settings):
    from servers.kinds.code import pool

    # One worker in all: the caller's sandbox is parked while the callee runs.
    settings.CODE_SANDBOX_WORKERS = 1
    saved = pool._pool, pool._pid
    pool._pool = pool._pid = None
    try:
        snapshot = snapshot_with(
            code("inner", "def main(args):\n    return {'doubled': args['n'] * 2}\n"),
            code(
                "outer",
                "def main(args):\n"
                "    r = call_tool('inner', {'n': 21})\n"
                "    return r['structuredContent']['doubled']\n",
            ),
        )
        result = await call(snapshot, "outer")
        assert result == {"content": [{"type": "text", "text": "42"}]}
    finally:
        if pool._pool is not None:
            await pool._pool.__aexit__(None, None, None)
        pool._pool, pool._pid = saved


async def test_nesting_stops_at_the_depth_limit_with_an_error_the_code_sees(settings):
    settings.CODE_MAX_CALL_DEPTH = 2
    snapshot = snapshot_with(
        code(
            "recurse",
            "def main(args):\n"
            "    try:\n"
            "        r = call_tool('recurse', {})\n"
            "        return 'inner said: ' + r['content'][0]['text']\n"
            "    except RecursionError as exc:\n"
            "        return str(exc)\n",
        )
    )
    result = await call(snapshot, "recurse")
    assert result["content"][0]["text"] == (
        "inner said: inner said: call_tool: nested calls limit (2) reached"
    )


async def test_an_unknown_tool_and_a_failing_tool_are_told_apart():
    snapshot = snapshot_with(
        code("broken", "def main(args):\n    raise ValueError('nope')\n"),
        code(
            "caller",
            "def main(args):\n"
            "    try:\n"
            "        call_tool('missing')\n"
            "    except ValueError as exc:\n"
            "        unknown = str(exc)\n"
            "    failed = call_tool('broken')\n"
            "    return {'unknown': unknown, 'isError': failed['isError']}\n",
        ),
    )
    result = await call(snapshot, "caller")
    assert result["structuredContent"] == {
        "unknown": "call_tool: this server has no tool 'missing'",
        "isError": True,
    }
