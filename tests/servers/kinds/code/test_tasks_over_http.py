"""Long code tools as MCP Tasks on a real Celery worker: a code tool with execution.taskSupport is
run by the worker's own sandbox pool, and cancelling the task stops the code."""

import pytest

from tests.celery_workers import running_workers, wait_until
from tests.gateway.endpoint.mcp_http import RawMcp

from .live import code_tool_def, make_tenant
from .sandbox_processes import monty_workers

CRUNCH = """
import time
def main(args):
    total = 0
    for i in range(args["n"]):
        total += i * i
    progress(1, 1, "crunched")
    return {"total": total}
"""
# A tool that sleeps until cancelled: its sleep is the subject (a task to cancel mid-run).
SLEEPY = "import time\ndef main(args):\n    while True:\n        time.sleep(1)\n"


@pytest.fixture
def worker(live_database, tmp_path):
    with running_workers(tmp_path) as start:
        yield start()


@pytest.fixture
def tenant(committed, unique):
    optional = {"taskSupport": "optional"}
    return make_tenant(
        committed,
        f"code-tasks-{unique}",
        [
            code_tool_def("crunch", CRUNCH, execution=optional),
            code_tool_def(
                "sleepy", SLEEPY, execution=optional, config={"limits": {"wallSeconds": 60}}
            ),
        ],
    )


@pytest.fixture
def session(asgi_server, tenant):
    client = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    client.initialize({})
    return client


def finished(client, task_id):
    def check():
        task = client.call("tasks/get", {"taskId": task_id})["result"]
        return task if task["status"] in ("completed", "failed", "cancelled") else None

    return wait_until(check, timeout=60, interval=0.2, what=f"task {task_id}")


def test_a_code_tool_runs_as_a_task_on_a_celery_worker(session, worker):
    created = session.call(
        "tools/call", {"name": "crunch", "arguments": {"n": 100000}, "task": {"ttl": 60000}}
    )["result"]
    task_id = created["task"]["taskId"]
    assert finished(session, task_id)["status"] == "completed"
    result = session.call("tasks/result", {"taskId": task_id})["result"]
    assert result["structuredContent"] == {"total": sum(i * i for i in range(100000))}
    # The worker ran the code in sandbox subprocesses of its own.
    assert monty_workers(worker.process.pid)


def test_cancelling_a_code_task_stops_the_code(session, worker):
    created = session.call("tools/call", {"name": "sleepy", "arguments": {}, "task": {}})
    task_id = created["result"]["task"]["taskId"]
    wait_until(lambda: monty_workers(worker.process.pid), timeout=30, what="a sandbox worker")
    assert session.call("tasks/cancel", {"taskId": task_id})["result"]["status"] == "cancelled"
    wait_until(lambda: "succeeded" in worker.log(), timeout=20, what="the run to stop")
