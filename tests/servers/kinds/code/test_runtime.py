"""Running code tools in the Monty sandbox: results, escapes that fail, limits that hold, and a
worker crash that costs one call."""

import asyncio
import os
import signal

import pytest

from mcp_protocol.errors import ToolError
from servers.kinds import code
from tests.waiting import wait_until_async

from .sandbox_processes import busy_workers, monty_workers, niceness


async def run(tool, arguments=None, ctx=None):
    from mcp_protocol.context import NullContext

    return await code.call(tool, arguments or {}, ctx or NullContext())


async def failure(tool, arguments=None, ctx=None) -> str:
    with pytest.raises(ToolError) as caught:
        await run(tool, arguments, ctx)
    return caught.value.message


# -- results ---------------------------------------------------------------------------------------


async def test_a_plain_main_returning_text_is_one_text_block(code_tool):
    tool = code_tool("def main(args):\n    return 'Hello ' + args['who']\n")
    assert await run(tool, {"who": "Ada"}) == {"content": [{"type": "text", "text": "Hello Ada"}]}


async def test_a_dict_becomes_structured_content_with_its_json_as_text(code_tool):
    tool = code_tool("async def main(args, ctx):\n    return {'total': sum(args['xs'])}\n")
    assert await run(tool, {"xs": [1, 2, 3]}) == {
        "content": [{"type": "text", "text": '{"total":6}'}],
        "structuredContent": {"total": 6},
    }


async def test_content_blocks_pass_through_and_bad_ones_are_named(code_tool):
    good = code_tool(
        "def main(args):\n"
        "    return {'content': [{'type': 'text', 'text': 'a'}], 'isError': True}\n"
    )
    assert await run(good) == {"content": [{"type": "text", "text": "a"}], "isError": True}
    bad = code_tool("def main(args):\n    return {'content': [{'type': 'text'}]}\n")
    assert "content[0].text: required" in await failure(bad)


async def test_an_output_schema_needs_a_dict(code_tool):
    tool = code_tool("def main(args):\n    return [1, 2]\n", output_schema={"type": "object"})
    assert "outputSchema needs a dict" in await failure(tool)


async def test_an_error_in_the_code_shows_its_own_traceback_lines(code_tool):
    tool = code_tool(
        "def helper(x):\n    return x['missing']\n\ndef main(args):\n    return helper({})\n"
    )
    message = await failure(tool)
    assert message.startswith("The code raised an error:\nTraceback (most recent call last):")
    assert 'File "main.py", line 5, in main' in message
    assert 'File "main.py", line 2, in helper' in message
    assert message.endswith("KeyError: missing")
    assert "_GetmcpContext" not in message


async def test_await_on_host_functions_is_optional(code_tool):
    tool = code_tool(
        "async def main(args, ctx):\n"
        "    await log('info', 'awaited')\n"
        "    ctx.log('info', 'plain')\n"
        "    log('bare line')\n"
        "    return 'ok'\n"
    )
    from mcp_protocol.context import NullContext

    ctx = NullContext()
    assert (await run(tool, ctx=ctx))["content"][0]["text"] == "ok"
    assert [entry["data"] for entry in ctx.logs] == ["awaited", "plain", "bare line"]


async def test_the_standard_library_monty_ships_is_there(code_tool):
    tool = code_tool(
        "import json, re, math, datetime, base64, hashlib\n"
        "def main(args):\n"
        "    digest = hashlib.sha256(b'x').hexdigest()[:8]\n"
        "    return json.dumps({'sqrt': math.sqrt(16), 'm': re.findall(r'\\d', 'a1b2'), 'd': digest})\n"
    )
    assert (await run(tool))["content"][0]["text"] == (
        '{"sqrt": 4.0, "m": ["1", "2"], "d": "2d711642"}'
    )


# -- escapes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            "import os\n    return os.system('id')",
            "AttributeError: module 'os' has no attribute 'system'",
        ),
        ("import subprocess", "ModuleNotFoundError: No module named 'subprocess'"),
        ("import socket", "ModuleNotFoundError: No module named 'socket'"),
        ("import ctypes", "ModuleNotFoundError: No module named 'ctypes'"),
        ("return open('/etc/passwd').read()", "PermissionError"),
        ("import pathlib\n    return pathlib.Path('/etc/hostname').read_text()", "PermissionError"),
        ("import os\n    return os.environ['HOME']", "'os.environ' is not supported"),
        (
            "return ().__class__.__bases__",
            "AttributeError: 'tuple' object has no attribute '__class__'",
        ),
        ("return type(1).__mro__", "has no attribute '__mro__'"),
        ("return (lambda: 1).__globals__", "has no attribute '__globals__'"),
        ("return (lambda: 1).__code__", "has no attribute '__code__'"),
        ("return __import__('os')", "NameError: name '__import__' is not defined"),
        ("import sys\n    return sys.modules", "module 'sys' has no attribute 'modules'"),
        ("return getattr(1, '__class__')", "has no attribute '__class__'"),
        ("return eval(\"__import__('os')\")", "NameError: name '__import__' is not defined"),
    ],
)
async def test_escape_attempts_fail_with_a_clear_error(code_tool, body, error):
    tool = code_tool(f"def main(args):\n    {body}\n")
    message = await failure(tool)
    assert message.startswith("The code raised an error:")
    assert error in message


# -- limits ----------------------------------------------------------------------------------------


async def test_a_runaway_loop_stops_at_the_cpu_limit(code_tool):
    tool = code_tool("def main(args):\n    while True:\n        pass\n", limits={"cpuSeconds": 0.3})
    assert await failure(tool) == "The code tool was stopped: CPU time limit exceeded (0.3 s)."


@pytest.mark.parametrize(
    "bomb",
    [
        "return len('x' * (10 ** 10))",
        "xs = []\n    while True:\n        xs.append([0] * 10000)",
        "return 2 ** 1000000000",
        "s = 'ab'\n    for i in range(60):\n        s = s + s\n    return len(s)",
    ],
)
async def test_memory_bombs_stop_at_the_memory_limit(code_tool, bomb):
    tool = code_tool(f"def main(args):\n    {bomb}\n", limits={"memoryMb": 16})
    assert await failure(tool) == "The code tool was stopped: memory limit exceeded (16 MB)."


async def test_a_huge_result_stops_at_the_output_limit(code_tool):
    tool = code_tool("def main(args):\n    return 'x' * 100000\n", limits={"outputBytes": 10000})
    message = await failure(tool)
    assert message == "The code tool was stopped: output limit exceeded (10000 bytes)."


async def test_huge_printing_stops_at_the_output_limit(code_tool):
    tool = code_tool(
        "def main(args):\n    while True:\n        print('x' * 1000)\n",
        limits={"outputBytes": 10000},
    )
    assert await failure(tool) == (
        "The code tool was stopped: output limit exceeded (10000 bytes printed)."
    )


async def test_deep_recursion_stops_at_the_recursion_limit(code_tool):
    tool = code_tool(
        "def f(n):\n    return f(n + 1)\n\ndef main(args):\n    return f(0)\n",
        limits={"recursionDepth": 50},
    )
    assert await failure(tool) == "The code tool was stopped: recursion limit exceeded (depth 50)."


async def test_too_many_host_calls_stop_at_the_host_call_limit_even_when_caught(code_tool):
    tool = code_tool(
        "def main(args):\n"
        "    for i in range(100):\n"
        "        try:\n"
        "            log('info', str(i))\n"
        "        except Exception:\n"
        "            pass\n",
        limits={"hostCalls": 5},
    )
    assert await failure(tool) == "The code tool was stopped: host call limit exceeded (5 calls)."


async def test_sleeping_past_the_wall_time_stops_at_the_wall_limit(code_tool):
    # The tool's own sleep (inside the sandbox) is the subject, not a wait of the test's.
    tool = code_tool(
        "import time\ndef main(args):\n    time.sleep(5)\n    return 'woke'\n",
        limits={"wallSeconds": 0.5},
    )
    started = asyncio.get_running_loop().time()
    assert await failure(tool) == "The code tool was stopped: wall time limit exceeded (0.5 s)."
    assert asyncio.get_running_loop().time() - started < 3


async def test_workers_run_below_this_process_priority(code_tool, settings):
    tool = code_tool("def main(args):\n    while True:\n        pass\n", limits={"cpuSeconds": 1})
    call = asyncio.ensure_future(run(tool))
    (worker,) = await wait_until_async(
        lambda: busy_workers(os.getpid()), interval=0.02, what="a busy sandbox worker"
    )
    assert niceness(worker) >= os.getpriority(os.PRIO_PROCESS, 0) + settings.CODE_SANDBOX_NICE
    with pytest.raises(ToolError):
        await call


# -- crash isolation -------------------------------------------------------------------------------


async def test_a_killed_worker_is_one_failed_call_and_the_next_call_works(code_tool):
    runaway = code_tool(
        "def main(args):\n    while True:\n        pass\n", limits={"cpuSeconds": 5}
    )
    call = asyncio.ensure_future(run(runaway))
    victim = (
        await wait_until_async(
            lambda: busy_workers(os.getpid()), interval=0.02, what="a busy sandbox worker"
        )
    )[0]
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(ToolError) as caught:
        await call
    assert caught.value.message.startswith("The code sandbox worker crashed; this call failed")
    assert victim not in monty_workers(os.getpid())
    fine = code_tool("def main(args):\n    return 'still here'\n")
    assert (await run(fine))["content"][0]["text"] == "still here"


async def test_short_sleeps_in_both_shapes_just_wait(code_tool):
    # The tool's own sleep (inside the sandbox) is the subject, not a wait of the test's.
    tool = code_tool(
        "import asyncio, time\n"
        "async def main(args, ctx):\n"
        "    time.sleep(0.01)\n"
        "    await asyncio.sleep(0.01)\n"
        "    await asyncio.gather(asyncio.sleep(0.01), asyncio.sleep(0.01))\n"
        "    return 'rested'\n"
    )
    assert (await run(tool))["content"][0]["text"] == "rested"


async def test_one_organization_cannot_hold_every_worker(code_tool, settings):
    settings.CODE_SANDBOX_PER_ORG = 1
    spin = code_tool(
        "def main(args):\n    while True:\n        pass\n",
        limits={"cpuSeconds": 1.5},
        server={"organizationId": 101},
    )
    again = code_tool("def main(args):\n    return 'a2'\n", server={"organizationId": 101})
    other = code_tool("def main(args):\n    return 'b'\n", server={"organizationId": 202})
    first = asyncio.ensure_future(run(spin))
    await wait_until_async(
        lambda: busy_workers(os.getpid()), interval=0.02, what="the first call's worker busy"
    )
    second = asyncio.ensure_future(run(again))
    # Another organization is served at once, while the first one's second call waits.
    assert (await run(other))["content"][0]["text"] == "b"
    assert not first.done() and not second.done()
    assert (await second)["content"][0]["text"] == "a2"
    assert first.done()
    with pytest.raises(ToolError):
        await first


async def test_a_sleeping_call_holds_no_worker_while_it_sleeps(code_tool, settings):
    from mcp_protocol.context import NullContext
    from servers.kinds.code import shares

    class Told(NullContext):
        said = asyncio.Event()

        async def log(self, level, data, logger=None):
            self.said.set()

    settings.CODE_SANDBOX_WORKERS = 1
    # The tool's own sleep (inside the sandbox) is the subject, not a wait of the test's.
    napper = code_tool(
        "import time\ndef main(args):\n    log('info', 'napping')\n    time.sleep(3)\n"
        "    return 'rested'\n",
        server={"organizationId": 101, "ownerId": 1},
    )
    other = code_tool("def main(args):\n    return 'b'\n", server={"organizationId": 202})
    same = code_tool(
        "def main(args):\n    return 'a2'\n", server={"organizationId": 101, "ownerId": 1}
    )
    ctx = Told()
    nap = asyncio.ensure_future(run(napper, ctx=ctx))
    await ctx.said.wait()
    await wait_until_async(lambda: not shares.held(), what="the napper parks as it sleeps")
    # The only worker serves another person, and the napper's own next call, while it sleeps.
    assert not nap.done()
    assert (await run(other))["content"][0]["text"] == "b"
    assert (await run(same))["content"][0]["text"] == "a2"
    assert not nap.done()
    assert (await nap)["content"][0]["text"] == "rested"


async def test_awaited_and_gathered_sleeps_park_too_and_still_count_against_the_wall_time(
    code_tool,
):
    # The tool's own sleep (inside the sandbox) is the subject, not a wait of the test's.
    tool = code_tool(
        "import asyncio\n"
        "async def main(args, ctx):\n"
        "    await asyncio.sleep(0.02)\n"
        "    await asyncio.gather(asyncio.sleep(0.02), asyncio.sleep(0.02))\n"
        "    await asyncio.sleep(5)\n"
        "    return 'woke'\n",
        limits={"wallSeconds": 0.5},
    )
    assert await failure(tool) == "The code tool was stopped: wall time limit exceeded (0.5 s)."


@pytest.mark.parametrize("pause", ["time.sleep(0.01)", "log('info', 'again')"])
async def test_parking_between_bursts_does_not_reset_the_cpu_limit(code_tool, pause):
    """A parked sandbox carries its CPU time through the dump into the worker that restores it,
    so napping between bursts never buys more CPU than a plain loop."""
    tool = code_tool(
        "import time\n"
        "def burn():\n"
        "    n = 0\n"
        "    for i in range(150000):\n"
        "        n += i\n"
        "def main(args):\n"
        "    for _ in range(190):\n"
        "        burn()\n"
        f"        {pause}\n"
        "    return 'all of it'\n",
        limits={"cpuSeconds": 1, "hostCalls": 200, "wallSeconds": 60},
    )
    assert await failure(tool) == "The code tool was stopped: CPU time limit exceeded (1 s)."
