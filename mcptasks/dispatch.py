"""Handing a task to something that runs it.

With a broker (REDIS_URL set) tasks go to Celery workers (`mcptasks.run_tool`). Without one
(embedded mode, where settings make CELERY_TASK_ALWAYS_EAGER true) they run in this process on a
few daemon threads, each running the same coroutine as a worker in its own event loop: the
request that created the task returns at once, as it does with Celery. Embedded tasks do not
survive the process; recovery.py restarts them when a client next looks at them.
"""

import logging
import queue
import threading

from django.conf import settings

log = logging.getLogger(__name__)

_queue: "queue.Queue[str]" = queue.Queue()
_threads: list[threading.Thread] = []
_lock = threading.Lock()


def in_process() -> bool:
    return bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False))


def _work() -> None:
    from .runner import run_sync

    while True:
        task_id = _queue.get()
        try:
            run_sync(task_id, "in-process")
        except Exception:
            log.exception("in-process task %s crashed", task_id)
        finally:
            _queue.task_done()


def _ensure_threads() -> None:
    size = int(getattr(settings, "MCP_TASK_EMBEDDED_THREADS", 4))
    with _lock:
        while len(_threads) < size:
            thread = threading.Thread(target=_work, name=f"mcp-task-{len(_threads)}", daemon=True)
            thread.start()
            _threads.append(thread)


def dispatch(task_id: str) -> None:
    from django.utils import timezone

    from .models import Task

    Task.objects.filter(pk=task_id).update(dispatched_at=timezone.now())
    if in_process():
        _ensure_threads()
        _queue.put(task_id)
        return
    from .tasks import run_tool

    run_tool.apply_async(args=[task_id])
