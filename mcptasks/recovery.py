"""Tasks whose worker died: started again, or failed with a reason; expired tasks cleaned up.

`reap()` runs periodically (Celery beat, task `mcptasks.reap_tasks`); `recover_if_stale()` does
the same for one task whenever a client looks at it, so recovery also happens without beat
(embedded mode, where a restarted process leaves its running tasks behind).
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from mcp_protocol.errors import INTERNAL_ERROR

from . import fairness
from .dispatch import dispatch, dispatch_waiting
from .models import Task
from .runner import (
    ACTIVE,
    end_locked,
    max_attempts,
    queue_patience_seconds,
    stale_after_seconds,
    worker_lost_error,
)


def _recover(task: Task, now) -> str:
    """Inside a transaction holding the row lock. Returns what was done."""
    if task.expires_at <= now:
        end_locked(task, Task.FAILED, error={"code": INTERNAL_ERROR, "message": "Task expired"})
        return "expired"
    if task.attempts >= max_attempts():
        end_locked(task, Task.FAILED, error=worker_lost_error(task.attempts))
        return "failed"
    # Clearing the heartbeat lets the next delivery claim the row.
    task.heartbeat_at = None
    task.status_message = "Restarting: the worker running this task stopped."
    task.save(update_fields=["heartbeat_at", "status_message"])
    task_id = task.pk
    transaction.on_commit(lambda: dispatch(task_id))
    return "retried"


def _is_stale(task: Task, now, stale_after: float) -> bool:
    if task.status not in ACTIVE:
        return False
    if task.expires_at <= now:
        return True
    return task.heartbeat_at is not None and task.heartbeat_at <= now - timedelta(
        seconds=stale_after
    )


def recover_if_stale(task: Task, stale_after: float | None = None) -> Task:
    stale_after = stale_after_seconds() if stale_after is None else stale_after
    now = timezone.now()
    if not _is_stale(task, now, stale_after):
        return task
    with transaction.atomic():
        row = Task.objects.select_for_update().filter(pk=task.pk).first()
        if row is not None and _is_stale(row, now, stale_after):
            _recover(row, now)
    return Task.objects.filter(pk=task.pk).first() or task


def reap(stale_after: float | None = None, queue_patience: float | None = None) -> dict:
    """Recover every task whose worker went silent, dispatch again the tasks no worker ever
    started, and delete every task past its TTL (a run still going on a deleted task sees its
    row gone and stops). Returns counts."""
    stale_after = stale_after_seconds() if stale_after is None else stale_after
    queue_patience = queue_patience_seconds() if queue_patience is None else queue_patience
    now = timezone.now()
    counts = {"retried": 0, "failed": 0, "expired": 0, "requeued": 0, "deleted": 0}
    counts["deleted"], _ = Task.objects.filter(expires_at__lte=now).delete()
    stale = Task.objects.filter(
        status__in=ACTIVE, heartbeat_at__lte=now - timedelta(seconds=stale_after)
    )
    for task_id in stale.values_list("pk", flat=True):
        with transaction.atomic():
            row = Task.objects.select_for_update(skip_locked=True).filter(pk=task_id).first()
            if row is not None and _is_stale(row, now, stale_after):
                counts[_recover(row, now)] += 1
    # A duplicate delivery is harmless (only one run claims the row), a lost one is not.
    unclaimed = Task.objects.filter(
        status__in=ACTIVE,
        heartbeat_at__isnull=True,
        dispatched_at__lte=now - timedelta(seconds=queue_patience),
    ).values_list("pk", flat=True)
    for task_id in unclaimed:
        transaction.on_commit(lambda task_id=task_id: dispatch(task_id))
        counts["requeued"] += 1
    # Deferred tasks whose organization has a free slot again, in case the run that freed it
    # died before handing it on.
    for organization_id in fairness.organizations_waiting():
        counts["requeued"] += dispatch_waiting(organization_id, stale_after)
    return counts
