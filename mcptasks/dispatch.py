"""Handing a task to something that runs it.

With a broker (REDIS_URL set) tasks go to Celery workers as messages to the task named
`mcptasks.run_tool` (tasks.py); sending it by name keeps this module below the Celery task
module, which calls `run` here. Without a broker (embedded mode, where settings make
CELERY_TASK_ALWAYS_EAGER true) they run in this process on a few daemon threads, each running
the same coroutine as a worker in its own event loop: the request that created the task returns
at once, as it does with Celery. Embedded tasks do not survive the process; recovery.py restarts
them when a client next looks at them.

A publish rides out a failover of the broker's Redis for REDIS_SENTINEL_FAILOVER_SECONDS
(infra/broker_publish.py), then fails: `send` raises `NotQueued`. The MCP endpoint sends a new
task's message itself, off the database thread (gateway/endpoint/tasks.py), so that wait holds
up no other call's queries.
"""

import logging
import queue
import threading

from django.conf import settings
from django.utils import timezone
from kombu.exceptions import OperationalError

from getmcp.celery import app
from infra.broker_publish import publish_retry_policy
from mcp_protocol.errors import INTERNAL_ERROR

from . import fairness, runner
from .models import Task

log = logging.getLogger(__name__)

RUN_TOOL = "mcptasks.run_tool"
IN_PROCESS = "in-process"  # the delivery id of an in-process run (Task.celery_task_id)
QUEUE_DOWN = "The task queue did not answer, so this task did not start. Try again shortly."

_queue: "queue.Queue[str]" = queue.Queue()
_threads: list[threading.Thread] = []
_lock = threading.Lock()


def in_process() -> bool:
    return settings.CELERY_TASK_ALWAYS_EAGER


def run(task_id: str, delivery_id: str = "") -> str | None:
    """Run one task to its end; the slot it held then goes to its organization's oldest
    deferred task. What a Celery worker and an in-process thread both do with a task id."""
    return runner.run_sync(task_id, delivery_id, hand_on=dispatch_waiting)


def _work() -> None:
    while True:
        task_id = _queue.get()
        try:
            run(task_id, IN_PROCESS)
        except Exception:
            log.exception("in-process task %s crashed", task_id)
        finally:
            _queue.task_done()


def _ensure_threads() -> None:
    size = settings.MCP_TASK_EMBEDDED_THREADS
    with _lock:
        while len(_threads) < size:
            thread = threading.Thread(target=_work, name=f"mcp-task-{len(_threads)}", daemon=True)
            thread.start()
            _threads.append(thread)


class NotQueued(Exception):
    """The broker did not take the task's message within the failover budget."""


def send(task_id: str) -> None:
    """Hand the task to a worker (or a thread); no database work, so any thread may call it."""
    if in_process():
        _ensure_threads()
        _queue.put(task_id)
        return
    policy = publish_retry_policy(seconds=settings.REDIS_SENTINEL_FAILOVER_SECONDS)
    try:
        app.send_task(RUN_TOOL, args=[task_id], ignore_result=True, retry_policy=policy)
    except OperationalError as failed:  # what kombu makes of a connection error it gave up on
        raise NotQueued(str(failed)) from failed


def dispatch(task_id: str) -> None:
    Task.objects.filter(pk=task_id).update(dispatched_at=timezone.now())
    send(task_id)


def fail_unqueued(task_id: str) -> None:
    """End a task whose message the broker never took (`send` raised): no run will claim it,
    and its creator was told it did not start, so the reaper must not start it later."""
    runner.finish(
        task_id,
        Task.FAILED,
        error={"code": INTERNAL_ERROR, "message": QUEUE_DOWN},
    )


def dispatch_waiting(organization_id: int, stale_after: float) -> int:
    """Hand the organization's oldest deferred tasks to the queue, as many as it has free
    slots; returns how many."""
    task_ids = fairness.next_waiting(organization_id, stale_after)
    for task_id in task_ids:
        dispatch(task_id)
    return len(task_ids)
