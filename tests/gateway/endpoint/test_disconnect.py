"""A 2026-07-28 call is cancelled when its client goes away: told by getmcp's uvicorn protocol,
or seen through receive() under any other ASGI server. Over a real server, the call stops, the
call log says it was cancelled, and a streamed answer is kept alive while it works."""

import asyncio
import json
import time

import httpx2
import pytest

from gateway.endpoint.disconnect import run_until_done_or_gone
from gateway.endpoint.http import ON_DISCONNECT, HttpRequest
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition, workflow_tool
from tests.gateway.endpoint.mcp_http import ACCEPT_BOTH
from tests.waiting import wait_until

MODERN = "2026-07-28"


def request_with(extensions: dict | None, receive=None) -> HttpRequest:
    scope = {"type": "http", "method": "POST", "path": "/mcp/x", "headers": []}
    if extensions is not None:
        scope["extensions"] = extensions

    async def never():
        await asyncio.Event().wait()

    return HttpRequest(scope, receive or never)


async def ended_soon(task: asyncio.Task) -> tuple[bool, bool]:
    """The held call's outcome, once it has ended by itself (not cancelled by a timeout)."""
    await asyncio.wait({task}, timeout=5)
    if not task.done():
        task.cancel()
        raise AssertionError("the call was not cancelled")
    return task.result()


async def held_call(watch_for: HttpRequest, gone_after: asyncio.Event) -> tuple[bool, bool]:
    """Runs a call that waits for ever, as the endpoint runs one; returns whether its client
    went, and whether the call ran to its end."""
    ended = False

    async def call() -> None:
        nonlocal ended
        gone_after.set()
        await asyncio.Event().wait()
        ended = True

    gone = await run_until_done_or_gone(watch_for, call())
    return gone, ended


async def test_the_protocols_notice_cancels_the_call_and_the_request_goes_on():
    callbacks: list = []
    started = asyncio.Event()
    task = asyncio.create_task(held_call(request_with({ON_DISCONNECT: callbacks}), started))
    await started.wait()
    assert len(callbacks) == 1
    for callback in callbacks:  # what getmcp's protocol does when the connection is lost
        callback()
    assert await ended_soon(task) == (True, False)
    assert task.cancelling() == 0 and not task.cancelled()


async def test_under_another_server_the_disconnect_is_seen_through_receive():
    disconnect = asyncio.Event()

    async def receive():
        await disconnect.wait()
        return {"type": "http.disconnect"}

    started = asyncio.Event()
    task = asyncio.create_task(held_call(request_with(None, receive), started))
    await started.wait()
    await asyncio.sleep(0.05)  # deliberate: a moment in which, connected, it must NOT end
    assert not task.done()
    disconnect.set()
    assert await ended_soon(task) == (True, False)
    assert task.cancelling() == 0


async def test_a_call_that_ends_first_leaves_no_callback_or_watcher_behind():
    callbacks: list = []
    gone = await run_until_done_or_gone(request_with({ON_DISCONNECT: callbacks}), noop())
    assert callbacks == [] and not gone

    tasks_before = asyncio.all_tasks()
    beside: set[asyncio.Task] = set()

    async def call() -> None:
        beside.update(asyncio.all_tasks() - tasks_before - {asyncio.current_task()})

    gone = await run_until_done_or_gone(request_with({}), call())
    await asyncio.sleep(0)  # one turn of the loop (no time waited): the cancelled watcher ends
    (watcher,) = beside
    assert watcher.cancelled() and not gone


async def noop() -> None:
    pass


# -- over a real server -----------------------------------------------------------------------------


@pytest.fixture
def waiting_server(committed, tenant):
    """A keyless server with a tool that reports progress, works for 2.5 s, then answers."""

    def make():
        definition = server_definition(f"{tenant.slug}-dc", auth="none")
        definition["tools"].append(
            workflow_tool(
                "long_step",
                "Reports progress, works a while, answers.",
                [
                    {"progress": {"progress": 1}},
                    {"sleep": {"ms": 2500}},
                    {"return": {"content": [{"type": "text", "text": "done"}]}},
                ],
            )
        )
        return import_definition(definition, tenant.org)

    return committed(make)


def long_step_request(progress_token: str) -> tuple[str, dict]:
    params = {
        "name": "long_step",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "disconnect-test", "version": "1"},
            "progressToken": progress_token,
        },
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = {
        "content-type": "application/json",
        "accept": ACCEPT_BOTH,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "long_step",
    }
    return json.dumps(body), headers


def test_closing_the_connection_cancels_a_call_on_a_real_server(
    asgi_server, committed, waiting_server
):
    from activity.drain import drain_call_log
    from activity.models import CallLog

    body, headers = long_step_request("p")
    url = asgi_server.mcp_url(waiting_server.slug)
    with (
        httpx2.Client(timeout=10) as http,
        http.stream("POST", url, content=body, headers=headers) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        for text in response.iter_text():
            if '"progress":1' in text:
                break  # the call is working: leave without waiting for its answer

    def row():
        drain_call_log()
        return CallLog.objects.filter(server_id=waiting_server.pk, tool="long_step").first()

    logged = wait_until(lambda: committed(row), 10, what="the cancelled call's row")
    assert (logged.outcome, logged.error) == ("error", "cancelled")
    assert logged.latency_ms < 2000  # it stopped when the client left, not when the step ended
    # The process goes on serving: the same tool, waited for, answers.
    with httpx2.Client(timeout=10) as http:
        answered = http.post(url, content=body, headers=headers)
    assert answered.status_code == 200 and '"done"' in answered.text


def test_a_streamed_call_is_kept_alive_while_it_works(asgi_server, waiting_server):
    # The live server sends keep-alives every second (tests/conftest.py).
    body, headers = long_step_request("k")
    url = asgi_server.mcp_url(waiting_server.slug)
    seen, started = "", time.monotonic()
    with (
        httpx2.Client(timeout=10) as http,
        http.stream("POST", url, content=body, headers=headers) as response,
    ):
        for text in response.iter_text():
            seen += text
    progress, keep_alive, done = (
        seen.index('"progress":1'),
        seen.index(": keep-alive"),
        seen.index('"done"'),
    )
    assert progress < keep_alive < done
    assert time.monotonic() - started >= 2.5
