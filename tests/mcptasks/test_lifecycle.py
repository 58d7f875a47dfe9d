import time
from datetime import timedelta

import pytest
from django.utils import timezone

from getmcp import heartbeat
from mcp_protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from mcptasks import recovery
from mcptasks.lifecycle import (
    DEFAULT_TTL_MS,
    MAX_TTL_MS,
    cancel_task,
    create_task,
    get_task,
    list_tasks,
    update_task,
)
from mcptasks.models import Task
from mcptasks.recovery import reap
from mcptasks.runner import claim
from mcptasks.wire import core_result, create_task_result, task_wire

CORE, EXT = "2025-11-25", "2026-07-28"


@pytest.fixture(autouse=True)
def a_worker_is_alive():
    """These tests store tasks without running them; a task is only accepted while a worker
    says it is alive (getmcp/heartbeat.py), so one says so."""
    heartbeat.worker_beat("lifecycle-tests")
    yield
    heartbeat.worker_gone("lifecycle-tests")


@pytest.fixture
def task(snapshot):
    return create_task(snapshot, "greet", {"name": "Ann"}, "key:1", 60_000)


def test_a_new_task_is_working_with_an_unguessable_id(snapshot, task):
    assert task.status == Task.WORKING
    assert len(task.id) >= 32
    other = create_task(snapshot, "greet", {}, "key:1", None)
    assert other.id != task.id
    assert other.ttl_ms == DEFAULT_TTL_MS


def test_the_ttl_is_kept_within_bounds(snapshot):
    assert create_task(snapshot, "greet", {}, "key:1", 10**12).ttl_ms == MAX_TTL_MS
    assert create_task(snapshot, "greet", {}, "key:1", 1).ttl_ms == 10_000
    with pytest.raises(McpError) as exc:
        create_task(snapshot, "greet", {}, "key:1", -5)
    assert exc.value.code == INVALID_PARAMS


def test_a_tool_that_forbids_tasks_or_does_not_exist_is_refused(snapshot):
    with pytest.raises(McpError) as exc:
        create_task(snapshot, "inline_only", {}, "key:1", None)
    assert exc.value.code == METHOD_NOT_FOUND
    with pytest.raises(McpError) as exc:
        create_task(snapshot, "nope", {}, "key:1", None)
    assert exc.value.code == INVALID_PARAMS
    assert not Task.objects.filter(server_id=snapshot.server_id).exists()


def test_the_creator_finds_its_task(task, org):
    assert get_task(task.id, org.pk, "key:1").pk == task.pk


@pytest.mark.parametrize("who", ["other credential", "other organization", "no such task"])
def test_anyone_else_gets_the_same_not_found(task, org, outsider_org, who):
    task_id, org_id, credential = {
        "other credential": (task.id, org.pk, "key:2"),
        "other organization": (task.id, outsider_org.pk, "key:1"),
        "no such task": ("x" * 32, org.pk, "key:1"),
    }[who]
    with pytest.raises(McpError) as exc:
        get_task(task_id, org_id, credential)
    assert exc.value.to_dict() == {
        "code": INVALID_PARAMS,
        "message": "Failed to retrieve task: Task not found",
    }


def test_an_expired_task_is_gone(task, org):
    Task.objects.filter(pk=task.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(McpError, match="expired"):
        get_task(task.id, org.pk, "key:1")
    assert not Task.objects.filter(pk=task.pk).exists()


def test_list_shows_only_the_callers_own_tasks(snapshot, task, org):
    create_task(snapshot, "greet", {}, "key:2", None)
    listed = list_tasks(org.pk, "key:1")
    assert [t.id for t in listed["tasks"]] == [task.id]
    assert "nextCursor" not in listed


def test_the_wire_forms_of_a_working_task(task):
    core = task_wire(task, CORE)
    assert core["taskId"] == task.id and core["status"] == "working"
    assert core["ttl"] == 60_000 and core["pollInterval"] == task.poll_interval_ms
    assert core["createdAt"].endswith("Z")
    ext = task_wire(task, EXT)
    assert ext["ttlMs"] == 60_000 and ext["pollIntervalMs"] == task.poll_interval_ms
    assert "ttl" not in ext and "result" not in ext
    assert create_task_result(task, CORE) == {"task": core}
    assert create_task_result(task, EXT) == {"resultType": "task", **ext}


def test_the_extension_form_inlines_the_outcome(task):
    task.status, task.result = Task.COMPLETED, {"content": [], "isError": False}
    assert task_wire(task, EXT)["result"] == task.result
    assert "result" not in task_wire(task, CORE)
    task.status, task.error = Task.FAILED, {"code": -32603, "message": "boom"}
    assert task_wire(task, EXT)["error"] == task.error
    task.status, task.input_requests = Task.INPUT_REQUIRED, {"k": {"method": "roots/list"}}
    assert task_wire(task, EXT)["inputRequests"] == {"k": {"method": "roots/list"}}


def test_core_result_returns_the_call_result_or_raises_its_error(task):
    task.status, task.result = Task.COMPLETED, {"content": [], "isError": True}
    result = core_result(task)
    assert result["isError"] is True
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task.id}
    task.status, task.error = Task.FAILED, {"code": -32603, "message": "boom"}
    with pytest.raises(McpError) as exc:
        core_result(task)
    assert exc.value.code == -32603 and exc.value.message == "boom"


def test_update_takes_answers_only_to_outstanding_requests(task):
    Task.objects.filter(pk=task.pk).update(
        status=Task.INPUT_REQUIRED,
        input_requests={
            "confirm": {"method": "elicitation/create"},
            "roots": {"method": "roots/list"},
        },
    )
    taken = update_task(task, {"confirm": {"action": "accept"}, "made_up": {"x": 1}})
    assert taken == ["confirm"]
    task.refresh_from_db()
    assert task.input_responses == {"confirm": {"action": "accept"}}
    # The answered key is no longer pending; the other one still is.
    assert task.status == Task.INPUT_REQUIRED
    assert list(task.input_requests) == ["roots"]
    assert update_task(task, {"confirm": {"action": "decline"}}) == []
    task.refresh_from_db()
    assert task.input_responses == {"confirm": {"action": "accept"}}
    assert update_task(task, {"roots": {"roots": []}}) == ["roots"]
    task.refresh_from_db()
    assert task.status == Task.WORKING and task.input_requests == {}
    with pytest.raises(McpError):
        update_task(task, ["not", "an", "object"])


def test_cancel_ends_the_task_at_once_and_flags_the_worker(task):
    cancelled = cancel_task(task)
    assert cancelled.status == Task.CANCELLED and cancelled.cancel_requested


def test_cancelling_an_ended_task_is_acknowledged_by_the_extension_and_refused_by_core(task):
    cancel_task(task)
    assert cancel_task(task, "2026-07-28").status == Task.CANCELLED
    with pytest.raises(McpError, match="already cancelled") as exc:
        cancel_task(task, "2025-11-25")
    assert exc.value.code == INVALID_PARAMS


def test_a_run_claims_a_task_only_once_while_its_heartbeat_is_fresh(task):
    first = claim(task.id, "delivery-1")
    assert first is not None and first.attempts == 1
    assert claim(task.id, "delivery-2") is None
    Task.objects.filter(pk=task.pk).update(status=Task.COMPLETED)
    Task.objects.filter(pk=task.pk).update(heartbeat_at=None)
    assert claim(task.id, "delivery-3") is None


def test_the_reaper_restarts_a_task_whose_worker_went_silent(task):
    claim(task.id)
    Task.objects.filter(pk=task.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    # The reaper sweeps every task, other tests' committed ones too: the row tells of this one.
    assert reap()["retried"] >= 1
    task.refresh_from_db()
    assert task.status == Task.WORKING and task.heartbeat_at is None
    assert claim(task.id) is not None


def test_the_reaper_fails_a_task_that_lost_its_worker_too_often(task):
    Task.objects.filter(pk=task.pk).update(
        attempts=2, heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    assert reap()["failed"] >= 1  # and the row says which (other tests' tasks are swept too)
    task.refresh_from_db()
    assert task.status == Task.FAILED
    assert task.error["code"] == -32603
    assert "worker running this task stopped" in task.status_message


def test_looking_at_a_silent_task_recovers_it_without_the_reaper(task, org):
    Task.objects.filter(pk=task.pk).update(
        attempts=2, heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    assert get_task(task.id, org.pk, "key:1").status == Task.FAILED


def test_the_reaper_deletes_every_task_past_its_ttl(snapshot, task):
    done = create_task(snapshot, "greet", {}, "key:1", None)
    past = timezone.now() - timedelta(seconds=1)
    Task.objects.filter(pk=done.pk).update(status=Task.COMPLETED, expires_at=past)
    Task.objects.filter(pk=task.pk).update(expires_at=past)
    keep = create_task(snapshot, "greet", {}, "key:1", None)
    assert reap()["deleted"] >= 2  # the rows below say which: other tests' tasks expire too
    assert list(Task.objects.filter(server_id=snapshot.server_id).values_list("pk", flat=True)) == [
        keep.pk
    ]


def test_the_reaper_hands_out_again_a_task_no_worker_ever_started(
    task, monkeypatch, django_capture_on_commit_callbacks
):
    # The reaper sweeps every task, other tests' committed ones too: what counts is whether it
    # hands out this one.
    handed_out = []
    monkeypatch.setattr(recovery, "dispatch", handed_out.append)

    def reap_and_commit() -> list[str]:
        handed_out.clear()
        with django_capture_on_commit_callbacks(execute=True):
            reap(queue_patience=60)
        return handed_out

    long_ago = timezone.now() - timedelta(minutes=10)
    Task.objects.filter(pk=task.pk).update(dispatched_at=long_ago)
    assert reap_and_commit().count(task.id) == 1
    # Just dispatched, or claimed by a run: left alone.
    Task.objects.filter(pk=task.pk).update(dispatched_at=timezone.now())
    assert task.id not in reap_and_commit()
    Task.objects.filter(pk=task.pk).update(dispatched_at=long_ago)
    claim(task.id)
    assert task.id not in reap_and_commit()


def test_without_a_live_worker_a_task_is_refused_and_nothing_is_stored(snapshot):
    heartbeat.worker_gone("lifecycle-tests")
    with pytest.raises(McpError) as refused:
        create_task(snapshot, "greet", {}, "key:1", None)
    assert refused.value.data == {"reason": "no-task-worker"}
    assert not Task.objects.filter(server_id=snapshot.server_id).exists()


def test_a_worker_whose_heartbeat_went_stale_counts_as_gone(snapshot):
    heartbeat.worker_gone("lifecycle-tests")
    heartbeat.worker_beat("stale-worker", now=time.time() - heartbeat.WORKER_STALE - 1)
    try:
        with pytest.raises(McpError):
            create_task(snapshot, "greet", {}, "key:1", None)
        heartbeat.worker_beat("fresh-worker")
        assert create_task(snapshot, "greet", {}, "key:1", None).status == Task.WORKING
    finally:
        heartbeat.worker_gone("stale-worker")
        heartbeat.worker_gone("fresh-worker")
