"""Handing a task to something that runs it.

With a broker (REDIS_URL set) tasks go to Celery workers as messages to the task named
`mcptasks.run_tool` (tasks.py); sending it by name keeps this module below the Celery task
module, which calls `run` here. Without a broker (embedded mode, where settings make
CELERY_TASK_ALWAYS_EAGER true) they run in this process on a few daemon threads, each running
the same coroutine as a worker in its own event loop: the request that created the task returns
at once, as it does with Celery. Embedded tasks do not survive the process; recovery.py restarts
them when a client next looks at them.
"""

import logging
import queue
import threading

from django.conf import settings
from django.utils import timezone

from getmcp.celery import app

from . import fairness, runner
from .models import Task

log = logging.getLogger(__name__)

RUN_TOOL = "mcptasks.run_tool"
IN_PROCESS = "in-process"  # the delivery id of an in-process run (Task.celery_task_id)

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


def dispatch(task_id: str) -> None:
    Task.objects.filter(pk=task_id).update(dispatched_at=timezone.now())
    if in_process():
        _ensure_threads()
        _queue.put(task_id)
        return
    app.send_task(RUN_TOOL, args=[task_id], ignore_result=True)


def dispatch_waiting(organization_id: int, stale_after: float) -> int:
    """Hand the organization's oldest deferred tasks to the queue, as many as it has free
    slots; returns how many."""
    task_ids = fairness.next_waiting(organization_id, stale_after)
    for task_id in task_ids:
        dispatch(task_id)
    return len(task_ids)
