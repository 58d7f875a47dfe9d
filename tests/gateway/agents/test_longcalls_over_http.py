"""Long task tools for clients without Tasks, through a live server, real Celery workers and
the official Python SDK: the call waits (with progress) up to the server's limit (3 s here; 50 s
by default), then answers a handle that the provided tools follow to the result, while a Tasks
client on the same server still gets a task. Cancelling through any path cancels the task."""

import threading
import time

import pytest
from django.conf import settings
from mcp.shared.exceptions import MCPError

from gateway.agents.longcalls import CANCEL, RESULT, STATUS
from servers.definition import import_definition
from tests.celery_workers import running_workers, wait_until
from tests.gateway.agents.conftest import sdk_client, text_of
from tests.gateway.endpoint.mcp_http import RawMcp

WAIT_SECONDS = 3
LONG_STEPS = [
    {"progress": {"progress": 1, "total": 4, "message": "Fetching"}},
    {"sleep": {"ms": 2500}},
    {"progress": {"progress": 2, "total": 4, "message": "Crunching"}},
    {"sleep": {"ms": 2500}},
    {"progress": {"progress": 3, "total": 4, "message": "Writing"}},
    {"sleep": {"ms": 3000}},
    {"return": {"content": [{"type": "text", "text": "report for {{ topic }}"}]}},
]
TOOLS = [
    {
        "name": "long_report",
        "description": "Builds a report; takes minutes in real life (about 8 s here).",
        "inputSchema": {
            "type": "object",
            "properties": {"topic": {"type": "string"}},
            "required": ["topic"],
        },
        "execution": {"taskSupport": "optional"},
        "kind": "workflow",
        "config": {"steps": LONG_STEPS},
    },
    {
        "name": "quick_report",
        "description": "A task tool that is done well within the wait.",
        "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}},
        "execution": {"taskSupport": "required"},
        "kind": "workflow",
        "config": {"steps": [{"sleep": {"ms": 200}}, LONG_STEPS[-1]]},
    },
]


@pytest.fixture(scope="module")
def worker(live_database, tmp_path_factory):
    """One Celery worker for the module: its start was most of each test's time, and every test
    has its own tenant. A thread pool, so a task being cancelled never holds the only slot.

    It takes MCP tasks only, as a production pool of them does: platform jobs on the broker
    (the tool embeddings every server import queues, from this module and from every module
    before it that ran no worker) would otherwise take its slots and CPU first, and a long call
    would miss its first progress inside the wait (3 s here)."""
    with running_workers(tmp_path_factory.mktemp("workers")) as start:
        yield start(concurrency=4, queues=settings.MCP_TASK_QUEUE)


@pytest.fixture
def long_server(committed, tenant, unique):
    def make():
        definition = {
            "slug": f"long-{unique}",
            "name": "long",
            "agents": {"longCalls": {"waitSeconds": WAIT_SECONDS}},
            "tools": TOOLS,
        }
        return import_definition(definition, tenant.org).slug

    return committed(make)


def task_status(raw: RawMcp, handle: str) -> str:
    return raw.call("tasks/get", {"taskId": handle})["result"]["status"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_long_tool_answers_a_handle_and_the_result_is_fetched_later(
    asgi_server, tenant, long_server, worker, mode
):
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    async with sdk_client(asgi_server.mcp_url(long_server), tenant.raw, mode) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert {STATUS, RESULT, CANCEL} <= listed
        started = time.monotonic()
        first = await client.call_tool(
            "long_report", {"topic": "tea"}, progress_callback=on_progress
        )
        waited = time.monotonic() - started
        assert WAIT_SECONDS <= waited < WAIT_SECONDS + 3
        handle = first.structured_content["handle"]
        assert handle in text_of(first) and STATUS in text_of(first)
        assert ("Fetching" in [m for _, _, m in progress]) and progress[0][:2] == (1, 4)
        status = await client.call_tool(STATUS, {"handle": handle})
        assert status.structured_content["status"] == "working"
        result = None
        for _ in range(6):
            result = await client.call_tool(RESULT, {"handle": handle})
            if text_of(result) == "report for tea":
                break
        assert text_of(result) == "report for tea" and not result.is_error
        done = await client.call_tool(STATUS, {"handle": handle})
        assert done.structured_content["status"] == "completed"
        if mode == "legacy":
            quick = await client.call_tool("quick_report", {"topic": "jam"})
            assert text_of(quick) == "report for jam"
        else:
            # 2026-07-28 without the tasks extension: a tool that must run as a task is refused
            # with -32021 (SEP-2663, checked by the conformance suite), long calls or not.
            with pytest.raises(MCPError) as refused:
                await client.call_tool("quick_report", {"topic": "jam"})
            assert refused.value.code == -32021


def test_a_tasks_client_on_the_same_server_still_gets_a_task(
    asgi_server, tenant, long_server, worker
):
    raw = RawMcp(asgi_server.mcp_url(long_server), key=tenant.raw)
    raw.initialize({"tasks": {}})
    listed = {tool["name"] for tool in raw.call("tools/list", {})["result"]["tools"]}
    assert STATUS not in listed
    created = raw.call(
        "tools/call", {"name": "long_report", "arguments": {"topic": "x"}, "task": {}}
    )["result"]
    assert created["task"]["status"] == "working"
    task_id = created["task"]["taskId"]
    finished = wait_until(
        lambda: task_status(raw, task_id) == "completed" or None, timeout=30, interval=0.5
    )
    assert finished
    result = raw.call("tasks/result", {"taskId": task_id})["result"]
    assert result["content"] == [{"type": "text", "text": "report for x"}]


async def test_the_provided_cancel_tool_cancels_the_task(asgi_server, tenant, long_server, worker):
    raw = RawMcp(asgi_server.mcp_url(long_server), key=tenant.raw)
    raw.initialize()
    async with sdk_client(asgi_server.mcp_url(long_server), tenant.raw) as client:
        first = await client.call_tool("long_report", {"topic": "tea"})
        handle = first.structured_content["handle"]
        cancelled = await client.call_tool(CANCEL, {"handle": handle})
        assert cancelled.structured_content["status"] == "cancelled"
        assert task_status(raw, handle) == "cancelled"
        after = await client.call_tool(RESULT, {"handle": handle})
        assert after.is_error and "cancelled" in text_of(after)


def test_tasks_cancel_on_the_handle_cancels_the_call(asgi_server, tenant, long_server, worker):
    raw = RawMcp(asgi_server.mcp_url(long_server), key=tenant.raw)
    raw.initialize()
    first = raw.call("tools/call", {"name": "long_report", "arguments": {"topic": "a"}})
    handle = first["result"]["structuredContent"]["handle"]
    assert raw.call("tasks/cancel", {"taskId": handle})["result"]["status"] == "cancelled"
    status = raw.call("tools/call", {"name": STATUS, "arguments": {"handle": handle}})
    assert status["result"]["structuredContent"]["status"] == "cancelled"


def test_cancelling_the_waiting_call_cancels_the_task(asgi_server, tenant, long_server, worker):
    raw = RawMcp(asgi_server.mcp_url(long_server), key=tenant.raw)
    raw.initialize()
    answered = {}

    def call():
        answered["messages"] = raw.request(
            "tools/call", {"name": "long_report", "arguments": {"topic": "b"}}
        )[1]

    thread = threading.Thread(target=call)
    thread.start()
    request_id = raw._next_id
    wait_until(
        lambda: [
            t for t in raw.call("tasks/list", {})["result"]["tasks"] if t["status"] == "working"
        ],
        timeout=10,
        what="the waiting call's task to be working",
    )
    raw.post(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": "changed my mind"},
        }
    )
    thread.join(timeout=15)
    assert not thread.is_alive()
    listed = raw.call("tasks/list", {})["result"]["tasks"]
    assert [task["status"] for task in listed] == ["cancelled"]
    assert not any("result" in message for message in answered["messages"])
