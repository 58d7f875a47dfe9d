"""How many tasks of one organization run at once, and who goes next when a slot frees.

Every MCP task message goes to the `mcp` Celery queue in the order tasks were created. A run
that finds its organization already at its cap of running tasks (its own task_concurrency, or
MCP_TASKS_PER_ORG_CONCURRENCY) does not
start: the task is *deferred* (its row stays `working`, `dispatched_at` cleared) and the message
is acknowledged, so the worker takes the next message, usually another organization's. When a
run of that organization ends, its oldest deferred tasks are dispatched again, at the back of
the queue: one organization's burst waits its turn behind the others instead of filling every
worker. The reaper (recovery.reap) does the same periodically, in case the run that should have
done it died.

"Running" means claimed with a live heartbeat, so a dead worker's tasks stop counting once the
heartbeat is stale. On Postgres the count and the claim happen under an advisory lock per
organization, so two workers claiming at once cannot both take the last slot.
"""

from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from .models import Task

ACTIVE = (Task.WORKING, Task.INPUT_REQUIRED)
# Namespaces the advisory lock (the first key of pg_advisory_xact_lock's two-int form).
_LOCK_SPACE = 0x6D637074  # "mcpt"
DEFERRED_MESSAGE = (
    "Queued: the organization's concurrent task limit is reached; it starts when one ends."
)


def per_org_cap(organization_id: int | None = None) -> int:
    """The organization's own cap (Organization.task_concurrency, docs/quotas.md), else the
    deployment's MCP_TASKS_PER_ORG_CONCURRENCY."""
    if organization_id is not None:
        from servers.quotas import task_concurrency

        return max(1, task_concurrency(organization_id))
    return max(1, settings.MCP_TASKS_PER_ORG_CONCURRENCY)


def lock_organization(organization_id: int) -> None:
    """Inside a transaction: serialize slot decisions of one organization (Postgres only;
    SQLite, the embedded mode, already runs one writer at a time)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_SPACE, organization_id % 2**31]
            )


def running(organization_id: int, stale_after: float, *, excluding: str | None = None) -> int:
    fresh = timezone.now() - timedelta(seconds=stale_after)
    rows = Task.objects.filter(
        organization_id=organization_id, status__in=ACTIVE, heartbeat_at__gt=fresh
    )
    if excluding is not None:
        rows = rows.exclude(pk=excluding)
    return rows.count()


def defer_locked(task: Task) -> None:
    """Inside a transaction holding the row lock: give the slot back to the queue."""
    task.dispatched_at = None
    task.status_message = DEFERRED_MESSAGE
    task.save(update_fields=["dispatched_at", "status_message", "updated_at"])


def waiting(organization_id: int):
    return Task.objects.filter(
        organization_id=organization_id,
        status__in=ACTIVE,
        heartbeat_at__isnull=True,
        dispatched_at__isnull=True,
        expires_at__gt=timezone.now(),
    ).order_by("created_at", "id")


def next_waiting(organization_id: int, stale_after: float) -> list[str]:
    """The organization's oldest deferred tasks, as many as it has free slots: those to hand to
    the queue now (dispatch.dispatch_waiting does)."""
    free = per_org_cap(organization_id) - running(organization_id, stale_after)
    if free <= 0:
        return []
    return list(waiting(organization_id).values_list("pk", flat=True)[:free])


def organizations_waiting() -> list[int]:
    rows = Task.objects.filter(
        status__in=ACTIVE, heartbeat_at__isnull=True, dispatched_at__isnull=True
    )
    return list(rows.values_list("organization_id", flat=True).distinct())
