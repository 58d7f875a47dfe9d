"""Platform jobs and tenants' tasks on separate queues; a per-organization cap on running tasks;
no task starting after its TTL. Real Celery workers on this run's Redis DB and test database."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from activity import recorder, stream
from activity.models import CallLog
from activity.tasks import drain_call_log
from infra.redis import sync_client
from mcptasks.fairness import DEFERRED_MESSAGE
from mcptasks.lifecycle import cancel_task, create_task
from mcptasks.models import Task
from servers.definition import import_definition
from servers.publishing import publish
from servers.snapshot import clear_cache, compile_definition
from tests.waiting import stays

from .conftest import tasks_definition, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("clean_redis")]

ONE_PER_ORG = {"MCP_TASKS_PER_ORG_CONCURRENCY": "1"}


@pytest.fixture
def other_snapshot(outsider_org, outsider):
    definition = tasks_definition("other-tasks")
    server = import_definition(definition, outsider_org, user=outsider)
    publish(server)
    clear_cache()
    return compile_definition(
        definition,
        server_id=server.pk,
        organization_id=outsider_org.pk,
        generation="test",
    )


def long_task(snapshot, label):
    return create_task(snapshot, "slow_compute", {"ms": 60_000, "label": label}, "key:1", None)


def started(task) -> bool:
    return Task.objects.get(pk=task.pk).attempts > 0


def running_count(snapshot) -> int:
    return Task.objects.filter(
        organization_id=snapshot.organization_id, heartbeat_at__isnull=False
    ).count()


def cancel_all():
    for task in Task.objects.exclude(status__in=Task.TERMINAL):
        cancel_task(task)


def deferred(tasks) -> int:
    return Task.objects.filter(
        pk__in=[t.pk for t in tasks], attempts=0, status_message=DEFERRED_MESSAGE
    ).count()


def test_a_short_task_of_another_org_runs_while_the_first_orgs_long_ones_wait(
    start_worker, snapshot, other_snapshot
):
    """Proven by order, not by a stopwatch: each long task runs for 60 s, so a short task that
    completes while the first long one is still running and the other two have not started
    was not queued behind them (without fairness the second slot would run a long one)."""
    start_worker(queues="mcp", concurrency=2, env=ONE_PER_ORG)
    try:
        long_ones = [long_task(snapshot, f"a{i}") for i in range(3)]
        # Whichever the worker claimed first runs; the organization's other two are deferred.
        first = wait_until(
            lambda: next((t for t in long_ones if started(t)), None), what="a long task to start"
        )
        wait_until(lambda: deferred(long_ones) == 2, what="the other long tasks to be deferred")

        created = time.monotonic()
        short = create_task(other_snapshot, "greet", {"name": "B"}, "key:1", None)
        wait_until(
            lambda: Task.objects.get(pk=short.pk).status == Task.COMPLETED,
            timeout=40,
            what="the other organization's task",
        )
        print(f"\nother organization's short task completed {time.monotonic() - created:.2f}s")

        # The organization at its cap still runs its one long task; the others wait, saying why.
        assert Task.objects.get(pk=first.pk).status == Task.WORKING
        assert running_count(snapshot) == 1
        assert deferred(long_ones) == 2
    finally:
        cancel_all()


def test_a_deferred_task_starts_when_its_organization_frees_a_slot(start_worker, snapshot):
    start_worker(queues="mcp", concurrency=2, env=ONE_PER_ORG)
    first = long_task(snapshot, "first")
    wait_until(lambda: started(first), what="the first task")
    second = create_task(snapshot, "greet", {"name": "next"}, "key:1", None)
    wait_until(
        lambda: Task.objects.get(pk=second.pk).status_message == DEFERRED_MESSAGE,
        what="the second task to be deferred",
    )
    assert not started(second)

    cancel_task(first)
    wait_until(
        lambda: Task.objects.get(pk=second.pk).status == Task.COMPLETED,
        timeout=15,
        what="the deferred task to run once the slot is free",
    )


def test_platform_jobs_run_while_tenant_tasks_fill_every_task_slot(
    start_worker, snapshot, other_snapshot, org
):
    start_worker(queues="mcp", concurrency=2, env=ONE_PER_ORG)
    start_worker(queues="platform")
    try:
        busy = [long_task(snapshot, "a"), long_task(other_snapshot, "b")]
        wait_until(lambda: all(started(t) for t in busy), what="both task slots to fill")

        recorder.record_call(organization_id=org.pk, method="tools/list")
        recorder.flush()
        sent = time.monotonic()
        drain_call_log.apply_async()
        wait_until(
            lambda: CallLog.objects.filter(organization=org).exists(),
            timeout=10,
            what="the drain job",
        )
        print(f"\nplatform job ran {time.monotonic() - sent:.2f}s after it was queued")
        assert stream.waiting(sync_client()) == 0
    finally:
        cancel_all()


def test_a_task_whose_ttl_passed_while_it_was_queued_never_starts(start_worker, snapshot):
    start_worker(queues="platform")  # nothing consumes the task queue yet
    task = create_task(snapshot, "greet", {"name": "late"}, "key:1", None)
    stays(
        lambda: Task.objects.get(pk=task.pk).attempts == 0,
        0.5,
        what="the task unstarted while nothing consumes its queue",
    )
    # The TTL runs out while the message waits in the queue.
    Task.objects.filter(pk=task.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    start_worker(queues="mcp")
    wait_until(lambda: Task.objects.get(pk=task.pk).status == Task.FAILED, what="the refusal")
    task.refresh_from_db()
    assert task.attempts == 0 and task.result is None
    assert task.error["message"] == "Task expired before it ran"


def test_an_organizations_own_task_cap_overrides_the_deployment_default(start_worker, snapshot):
    from accounts.models import Organization

    # The deployment allows 4 at once; this organization's quota allows 1 (docs/quotas.md).
    Organization.objects.filter(pk=snapshot.organization_id).update(task_concurrency=1)
    start_worker(queues="mcp", concurrency=2)
    try:
        first = long_task(snapshot, "first")
        wait_until(lambda: started(first), what="the first task")
        second = long_task(snapshot, "second")
        wait_until(
            lambda: Task.objects.get(pk=second.pk).status_message == DEFERRED_MESSAGE,
            what="the second task to wait for the organization's one slot",
        )
        assert not started(second) and running_count(snapshot) == 1

        Organization.objects.filter(pk=snapshot.organization_id).update(task_concurrency=2)
        cancel_task(first)
        wait_until(lambda: started(second), timeout=15, what="the second task once a slot frees")
    finally:
        cancel_all()
