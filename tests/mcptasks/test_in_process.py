"""Without a broker (embedded mode) tasks run on in-process threads behind the same interface."""

import time

import orjson
import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from infra.redis import sync_client
from mcp_protocol.errors import McpError
from mcptasks.core import core_task_result
from mcptasks.events import events_channel
from mcptasks.lifecycle import cancel_task, create_task, update_task
from mcptasks.models import Task, new_task_id
from mcptasks.runner import load_task_snapshot
from servers.publishing import publish

from .conftest import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("clean_redis")]


@pytest.fixture(autouse=True)
def embedded(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


def status_of(task):
    return Task.objects.get(pk=task.pk).status


def test_creating_a_task_returns_before_the_tool_finishes(snapshot):
    started = time.monotonic()
    task = create_task(snapshot, "slow_compute", {"ms": 1500, "label": "bg"}, "key:1", None)
    assert time.monotonic() - started < 1.0
    assert status_of(task) == Task.WORKING
    wait_until(lambda: status_of(task) == Task.COMPLETED, what="completion")
    task.refresh_from_db()
    assert task.result["content"][0]["text"] == "done bg"
    assert task.celery_task_id == "in-process"


def test_progress_logs_and_status_changes_are_published_on_the_task_channel(snapshot):
    events = []
    # The id is chosen first so only this task's channel is heard: Redis pub/sub channels are
    # shared by every database, so parallel test workers' tasks publish beside this one.
    task_id = new_task_id()
    pubsub = sync_client().pubsub()
    pubsub.subscribe(events_channel(task_id))
    pubsub.get_message(timeout=1)
    task = create_task(
        snapshot,
        "confirm_delete",
        {},
        "key:1",
        None,
        client_capabilities={"elicitation": {}},
        task_id=task_id,
    )
    wait_until(lambda: status_of(task) == Task.INPUT_REQUIRED, what="input_required")
    update_task(task, {"confirm": {"action": "decline"}})
    wait_until(lambda: status_of(task) == Task.COMPLETED, what="completion")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        message = pubsub.get_message(timeout=0.2)
        if message and message["type"] == "message":
            assert message["channel"].decode() == events_channel(task.id)
            events.append(orjson.loads(message["data"]))
        if [e for e in events if e.get("type") == "status"][-1:] and events[-1].get(
            "notifications", {}
        ).get("2026-07-28", {}).get("params", {}).get("status") == "completed":
            break
    pubsub.close()
    statuses = [e["notifications"]["2026-07-28"]["params"]["status"] for e in events]
    assert statuses == ["input_required", "working", "completed"]
    first = events[0]["notifications"]
    assert first["2026-07-28"]["method"] == "notifications/tasks"
    assert first["2026-07-28"]["params"]["inputRequests"]["confirm"]["method"] == (
        "elicitation/create"
    )
    assert first["2025-11-25"]["method"] == "notifications/tasks/status"
    assert events[-1]["notifications"]["2026-07-28"]["params"]["result"]["content"][0]["text"] == (
        "answer=decline"
    )


def test_progress_and_log_events_reach_listeners(snapshot):
    task_id = new_task_id()
    pubsub = sync_client().pubsub()
    pubsub.subscribe(events_channel(task_id))
    pubsub.get_message(timeout=1)
    task = create_task(
        snapshot, "slow_compute", {"ms": 10, "label": "p"}, "key:1", None, task_id=task_id
    )
    wait_until(lambda: status_of(task) == Task.COMPLETED, what="completion")
    kinds = {}
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and len(kinds) < 3:
        message = pubsub.get_message(timeout=0.2)
        if message and message["type"] == "message":
            event = orjson.loads(message["data"])
            kinds.setdefault(event["type"], event)
    pubsub.close()
    assert kinds["progress"] == {
        "type": "progress",
        "progress": 0.0,
        "total": 1.0,
        "message": "starting",
    }
    assert kinds["log"]["data"] == "computing p" and kinds["log"]["level"] == "info"


def test_cancelling_an_in_process_task_stops_it(snapshot):
    task = create_task(snapshot, "slow_compute", {"ms": 60_000, "label": "x"}, "key:1", None)
    wait_until(lambda: Task.objects.get(pk=task.pk).heartbeat_at, what="the run to start")
    cancel_task(task)
    # The run clears its heartbeat only when it ends; a 60 s sleep ends within a second.
    wait_until(
        lambda: Task.objects.get(pk=task.pk).heartbeat_at is None, timeout=5, what="the stop"
    )
    task.refresh_from_db()
    assert task.status == Task.CANCELLED and task.result is None


class AnsweringClient:
    """A session-era client: answers the requests put to it on the tasks/result stream."""

    def __init__(self):
        self.asked = []

    async def request(self, key, method, params):
        self.asked.append((key, method, params["message"]))
        return {"action": "accept", "content": {"ok": True}}


async def test_core_tasks_result_puts_input_requests_to_the_client_and_returns_the_result(
    snapshot, org
):

    task = await sync_to_async(create_task)(
        snapshot, "confirm_delete", {}, "key:1", None, client_capabilities={"elicitation": {}}
    )
    client = AnsweringClient()
    try:
        result = await core_task_result(task.id, org.pk, "key:1", client, timeout=20)
    finally:
        await sync_to_async(connections.close_all)()
    assert client.asked == [("confirm", "elicitation/create", "Delete it?")]
    assert result["content"][0]["text"] == "answer=accept"
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task.id}


async def test_core_tasks_result_raises_the_error_of_a_failed_task(snapshot, org):

    task = await sync_to_async(create_task)(snapshot, "protocol_error_job", {}, "key:1", None)
    try:
        with pytest.raises(McpError) as exc:
            await core_task_result(task.id, org.pk, "key:1", AnsweringClient(), timeout=20)
    finally:
        await sync_to_async(connections.close_all)()
    assert exc.value.code == -32603 and exc.value.message == "upstream exploded"


def test_a_task_pinned_to_a_version_runs_that_versions_tool(snapshot, tasks_server):
    greet = tasks_server.tools.get(name="greet")
    greet.config = {"content": [{"type": "text", "text": "Bonjour, {{ name }}!"}]}
    greet.save()
    publish(tasks_server)
    pinned = create_task(snapshot, "greet", {"name": "Ann"}, "key:1", None, server_version="1.0.0")
    latest = create_task(snapshot, "greet", {"name": "Ann"}, "key:1", None, server_version="1.0.1")
    # A version that was never published (a server serving its draft) pins nothing.
    unpinned = create_task(
        snapshot, "greet", {"name": "Ann"}, "key:1", None, server_version="7.0.0"
    )
    assert unpinned.server_version == ""
    for task in (pinned, latest, unpinned):
        wait_until(lambda task=task: Task.objects.get(pk=task.pk).is_terminal, what="the end")
    tasks = (pinned, latest, unpinned)
    texts = [Task.objects.get(pk=t.pk).result["content"][0]["text"] for t in tasks]
    assert texts == ["Hello, Ann!", "Bonjour, Ann!", "Bonjour, Ann!"]
    # A pinned version that is gone by the time the task runs has no tool to run.
    pinned.server_version = "7.0.0"
    assert load_task_snapshot(pinned) is None
