import asyncio

import pytest

from mcp_protocol.errors import Cancelled, InputRequired, McpError
from mcptasks.context import TaskContext
from mcptasks.models import Task


class Recorder:
    def __init__(self):
        self.published = []
        self.parked = []
        self.settled = []

    async def publish(self, channel, data):
        self.published.append((channel, data))

    async def park(self, key, method, params):
        self.parked.append((key, method))

    async def settle(self, key):
        self.settled.append(key)


def context(recorder, responses=None, capabilities=None, version="2026-07-28"):
    task = Task(
        id="t1",
        protocol_version=version,
        client_capabilities={"elicitation": {}} if capabilities is None else capabilities,
        credential="key:1",
        input_responses=responses or {},
    )
    return TaskContext(task, recorder, recorder.park, recorder.settle)


async def test_an_unanswered_request_is_parked_and_ends_the_round():
    recorder = Recorder()
    ctx = context(recorder)
    with pytest.raises(InputRequired) as exc:
        await ctx.request("a", "elicitation/create", {"message": "A?"})
    assert recorder.parked == [("a", "elicitation/create")]
    assert exc.value.input_requests == {
        "a": {"method": "elicitation/create", "params": {"message": "A?"}}
    }


async def test_waiting_for_answers_ends_only_when_all_of_them_came():
    ctx = context(Recorder())
    waiting = asyncio.ensure_future(ctx.wait_for_answers(["a", "b"]))
    ctx.observe(responses={"b": {"action": "decline"}}, cancelled=False)
    await asyncio.sleep(0.01)  # deliberate: a few turns of the loop in which it must NOT end
    assert not waiting.done()
    ctx.observe(responses={"a": {"action": "accept"}, "b": {"action": "decline"}}, cancelled=False)
    await asyncio.wait_for(waiting, 1)
    assert await ctx.request("a", "elicitation/create", {}) == {"action": "accept"}


async def test_an_answer_already_given_is_returned_without_asking_again():
    recorder = Recorder()
    ctx = context(recorder, responses={"a": {"action": "accept"}})
    assert await ctx.request("a", "elicitation/create", {}) == {"action": "accept"}
    assert recorder.parked == []


async def test_a_cancel_interrupts_waiting_for_answers():
    ctx = context(Recorder())
    waiting = asyncio.ensure_future(ctx.wait_for_answers(["a"]))
    await asyncio.sleep(0)  # one turn of the loop (no time waited): it runs up to its wait
    ctx.observe(responses={}, cancelled=True)
    with pytest.raises(Cancelled):
        await asyncio.wait_for(waiting, 1)


async def test_a_cancel_interrupts_a_sleep_at_once():
    ctx = context(Recorder())
    sleeping = asyncio.ensure_future(ctx.sleep(30))
    await asyncio.sleep(0)  # one turn of the loop (no time waited): it runs up to its wait
    ctx.observe(responses={}, cancelled=True)
    with pytest.raises(Cancelled):
        await asyncio.wait_for(sleeping, 1)


async def test_sleep_returns_after_its_time_when_nothing_happens():
    ctx = context(Recorder())
    loop = asyncio.get_running_loop()
    started = loop.time()
    await ctx.sleep(0.05)
    assert loop.time() - started >= 0.05


async def test_a_request_the_client_cannot_answer_is_refused_by_era():
    with pytest.raises(McpError) as exc:
        await context(Recorder(), capabilities={}).request("r", "roots/list", {})
    assert exc.value.code == -32021
    assert exc.value.data == {"requiredCapabilities": {"roots": {}}}
    with pytest.raises(McpError) as exc:
        await context(Recorder(), capabilities={}, version="2025-11-25").request(
            "r", "sampling/createMessage", {}
        )
    assert exc.value.code == -32602


async def test_progress_and_logs_go_to_the_task_channel():
    recorder = Recorder()
    ctx = context(recorder)
    await ctx.progress(1, 2, "half")
    await ctx.log("info", {"x": 1})
    assert [channel for channel, _ in recorder.published] == ["mcp:task:t1:events"] * 2
