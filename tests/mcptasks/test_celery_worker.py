"""Tasks on real Celery worker processes, on this run's Redis DB and test database.

The rows must be committed for another process to see them, hence transaction=True here.
"""

import os
import signal
import time

import pytest
from django.utils import timezone

from getmcp import heartbeat
from mcptasks.lifecycle import cancel_task, create_task, get_task, update_task
from mcptasks.models import Task
from mcptasks.recovery import reap
from tests.celery_workers import SharedWorker, running_workers

from .conftest import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("clean_redis")]


@pytest.fixture(scope="module")
def shared_worker(django_db_setup, tmp_path_factory):
    with running_workers(tmp_path_factory.mktemp("workers")) as start:
        yield SharedWorker(start)


@pytest.fixture
def a_worker(shared_worker):
    """A worker alive, kept for the next test of the module that only needs one."""
    return shared_worker.alive()


@pytest.fixture
def start_worker(shared_worker, start_worker):
    """Workers of this test's own: the module's shared one is stopped first, so none but these
    can claim the test's tasks."""
    shared_worker.stop()
    return start_worker


def status_of(task):
    return Task.objects.get(pk=task.pk).status


def test_a_worker_runs_a_task_to_completion(a_worker, snapshot, org):
    task = create_task(snapshot, "greet", {"name": "Ann"}, "key:1", 60_000)
    wait_until(lambda: status_of(task) == Task.COMPLETED, what="completion")
    done = get_task(task.id, org.pk, "key:1")
    assert done.result["content"] == [{"type": "text", "text": "Hello, Ann!"}]
    assert done.attempts == 1 and done.celery_task_id


def test_a_json_rpc_error_fails_the_task_and_a_tool_error_completes_it(a_worker, snapshot):
    broken = create_task(snapshot, "protocol_error_job", {}, "key:1", None)
    tool_error = create_task(snapshot, "failing_job", {}, "key:1", None)
    wait_until(lambda: status_of(broken) == Task.FAILED, what="failure")
    wait_until(lambda: status_of(tool_error) == Task.COMPLETED, what="completion")
    broken.refresh_from_db()
    tool_error.refresh_from_db()
    assert broken.error == {"code": -32603, "message": "upstream exploded"}
    assert tool_error.result["isError"] is True


def test_a_task_waits_for_the_clients_answer_and_goes_on(a_worker, snapshot, org):
    task = create_task(
        snapshot,
        "confirm_delete",
        {},
        "key:1",
        None,
        client_capabilities={"elicitation": {}},
    )
    wait_until(lambda: status_of(task) == Task.INPUT_REQUIRED, what="input_required")
    task = get_task(task.id, org.pk, "key:1")
    request = task.input_requests["confirm"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["message"] == "Delete it?"

    assert update_task(task, {"confirm": {"action": "accept", "content": {"ok": True}}}) == [
        "confirm"
    ]
    wait_until(lambda: status_of(task) == Task.COMPLETED, what="completion")
    task.refresh_from_db()
    assert task.result["content"][0]["text"] == "answer=accept"
    assert task.input_requests == {}


def test_a_task_needing_a_capability_the_client_lacks_fails(a_worker, snapshot):
    task = create_task(snapshot, "confirm_delete", {}, "key:1", None, protocol_version="2026-07-28")
    wait_until(lambda: status_of(task) == Task.FAILED, what="failure")
    task.refresh_from_db()
    assert task.error["code"] == -32021


def test_cancelling_stops_the_worker_cooperatively(start_worker, snapshot):
    start_worker()
    task = create_task(snapshot, "slow_compute", {"ms": 60_000, "label": "x"}, "key:1", None)
    wait_until(lambda: Task.objects.get(pk=task.pk).attempts == 1, what="the worker to start")
    started = time.monotonic()
    cancel_task(task)
    # The run clears the heartbeat when it ends, well before the 60 s sleep would have.
    wait_until(lambda: Task.objects.get(pk=task.pk).heartbeat_at is None, what="the run to end")
    assert time.monotonic() - started < 10
    task.refresh_from_db()
    assert task.status == Task.CANCELLED and task.result is None
    # The same worker is free again.
    quick = create_task(snapshot, "greet", {"name": "B"}, "key:1", None)
    wait_until(lambda: status_of(quick) == Task.COMPLETED, what="the next task")


def _kill_mid_task(worker, task):
    def running() -> bool:
        row = Task.objects.get(pk=task.pk)
        return row.heartbeat_at is not None and row.status == Task.WORKING

    wait_until(running, what="the worker to claim the task and run it")
    os.kill(worker.process.pid, signal.SIGKILL)
    worker.process.wait(10)
    assert status_of(task) == Task.WORKING  # left behind by the dead worker
    return worker


def test_a_task_whose_worker_is_killed_is_retried_on_another_worker(start_worker, snapshot):
    worker = start_worker()
    task = create_task(snapshot, "slow_compute", {"ms": 2000, "label": "again"}, "key:1", None)
    _kill_mid_task(worker, task)

    # The reaper retries it once its heartbeat is older than stale_after.
    wait_until(lambda: reap(stale_after=0.5)["retried"] == 1, what="the reaper to retry it")
    start_worker()
    wait_until(lambda: status_of(task) == Task.COMPLETED, timeout=30, what="the retry")
    task.refresh_from_db()
    assert task.attempts == 2
    assert task.result["content"][0]["text"] == "done again"


def test_a_task_whose_last_attempt_is_killed_ends_failed_with_a_reason(start_worker, snapshot):
    # Stored while a worker said it was alive, and marked as if an earlier worker had died on it
    # already, all before the worker that runs it starts (so it cannot claim it in between).
    heartbeat.worker_beat("earlier-worker")
    try:
        task = create_task(snapshot, "slow_compute", {"ms": 30_000, "label": "x"}, "key:1", None)
    finally:
        heartbeat.worker_gone("earlier-worker")
    Task.objects.filter(pk=task.pk).update(attempts=1)
    _kill_mid_task(start_worker(), task)

    wait_until(lambda: reap(stale_after=0.5)["failed"] == 1, what="the reaper to give up on it")
    task.refresh_from_db()
    assert task.status == Task.FAILED
    assert task.attempts == 2
    assert task.error["code"] == -32603
    assert "worker running this task stopped; gave up after 2 attempts" in task.error["message"]
    assert task.updated_at <= timezone.now()


def test_tasks_get_carries_the_latest_progress_message_as_status_message(a_worker, snapshot, org):
    from mcptasks.wire import task_wire

    task = create_task(snapshot, "slow_compute", {"ms": 60_000, "label": "x"}, "key:1", None)
    wait_until(
        lambda: Task.objects.get(pk=task.pk).status_message == "starting",
        what="the progress message on the row",
    )
    working = get_task(task.id, org.pk, "key:1")
    for era in ("2025-11-25", "2026-07-28"):
        wire = task_wire(working, era)
        assert (wire["status"], wire["statusMessage"]) == ("working", "starting")
    cancel_task(working)
    wait_until(lambda: status_of(task) == Task.CANCELLED, what="the cancel")
    assert Task.objects.get(pk=task.pk).status_message.startswith("Cancelled")
