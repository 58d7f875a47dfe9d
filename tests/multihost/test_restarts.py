"""PgBouncer and the Celery broker restarted under the platform deployed on several hosts: the
web hosts and the worker host reconnect by themselves, and the time from the restart to the
first request served again (a call that must read Postgres; a task run to its end) is printed
in the terminal summary."""

import time

import httpx2

from tests.gateway.endpoint.test_tasks import Modern
from tests.multihost.faults import echoes
from tests.waiting import wait_until


def test_the_platform_heals_after_pgbouncer_restarts(topology, tenant, heal_times):
    assert echoes(topology.url, tenant["slug"], tenant["key"])
    # A key no request has used: its first call must read Postgres, through the pooler.
    cold_key = tenant["spare_keys"][0]
    started = time.monotonic()
    topology.pgbouncer.stop()
    topology.pgbouncer.start()
    heal_times["PgBouncer restarted: listening again"] = time.monotonic() - started
    wait_until(
        lambda: echoes(topology.url, tenant["slug"], cold_key, timeout=5),
        timeout=60,
        interval=0.05,
        what="a call that reads Postgres to answer after PgBouncer restarted",
    )
    heal_times["PgBouncer restarted: a call reading Postgres answers"] = time.monotonic() - started
    # And every web host serves both kinds of call again.
    for web in topology.webs:
        assert echoes(web.url, tenant["slug"], tenant["key"])
        assert echoes(web.url, tenant["slug"], tenant["spare_keys"][1])


def start_task(url: str, slug: str, key: str, label: str) -> str | None:
    """A 2026-07-28 tools/call the server runs as a task; its id (None when refused)."""
    client = Modern(f"{url}/mcp/{slug}", key)
    try:
        status, message = client.send(
            "tools/call", {"name": "quick_task", "arguments": {"label": label}}
        )
    except httpx2.HTTPError:
        return None
    finally:
        client.http.close()
    result = message.get("result") or {}
    return result.get("taskId") if status == 200 and result.get("resultType") == "task" else None


def task_status(url: str, slug: str, key: str, task_id: str) -> str:
    client = Modern(f"{url}/mcp/{slug}", key)
    try:
        status, message = client.send("tasks/get", {"taskId": task_id})
    except httpx2.HTTPError:
        return ""
    finally:
        client.http.close()
    return (message.get("result") or {}).get("status", "") if status == 200 else ""


def test_tasks_run_again_after_the_broker_restarts(topology, tenant, heal_times):
    slug, key = tenant["slug"], tenant["key"]
    before = start_task(topology.url, slug, key, "before")
    assert before
    wait_until(
        lambda: task_status(topology.url, slug, key, before) == "completed",
        timeout=30,
        what="a task to complete before the restart",
    )
    started = time.monotonic()
    topology.broker.stop()
    topology.broker.start()
    started_task: list[str] = []

    def completed() -> bool:
        if not started_task:
            task_id = start_task(topology.url, slug, key, "after")
            if task_id is None:
                return False
            started_task.append(task_id)
        return task_status(topology.url, slug, key, started_task[0]) == "completed"

    wait_until(completed, timeout=90, interval=0.1, what="a task started after the restart")
    heal_times["broker restarted: a task started after it completes"] = time.monotonic() - started
    assert topology.worker.running
