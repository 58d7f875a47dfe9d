"""The process-wide pool of Monty sandbox workers.

Monty always runs code in `monty` worker subprocesses (pydantic-monty's AsyncMonty): a crash of
a worker (segfault, allocator abort, a kill) raises MontyCrashedError for that one call and the
pool replaces the worker, so this process never runs tenant code itself. Workers are reniced
(CODE_SANDBOX_NICE) so that a runaway loop competes for the CPU below the event loop that
answers everyone else's requests. The pool works from any event loop (the web process's, a
test run's, a Celery task's), so one pool per process is enough.

Who may take a worker is decided by shares.py (by paying account and by organization, with a
fair queue across accounts); this module only holds the AsyncMonty pool itself.
"""

import contextlib
import logging
import os
import threading

from django.conf import settings
from pydantic_monty import AsyncMonty

from .shares import CHECKOUT_TIMEOUT_SECONDS

log = logging.getLogger(__name__)

# Workers are recycled after this many calls, so nothing lingers in a long-lived worker.
CHECKOUTS_PER_WORKER = 200

_lock = threading.Lock()
_pool: AsyncMonty | None = None
_pid: int | None = None


async def get_pool() -> AsyncMonty:
    global _pool, _pid
    with _lock:
        pool, stale = _pool, _pid != os.getpid()
    if pool is not None and not stale:
        return pool
    fresh = AsyncMonty(
        min_processes=0,
        max_processes=max(1, settings.CODE_SANDBOX_WORKERS),
        checkout_timeout=CHECKOUT_TIMEOUT_SECONDS,
        # The host-side backstop: a worker silent for longer than any call may last is killed.
        request_timeout=settings.CODE_MAX_WALL_SECONDS + 5,
        max_checkouts_per_worker=CHECKOUTS_PER_WORKER,
    )
    await fresh.__aenter__()
    with _lock:
        if _pool is not None and _pid == os.getpid():
            winner = _pool
        else:
            # A forked child (a Celery worker) starts its own pool; the parent's is not its own.
            _pool, _pid, winner = fresh, os.getpid(), fresh
    if winner is not fresh:
        await fresh.__aexit__(None, None, None)
    return winner


def lower_priority(worker_pid: int | None) -> None:
    """Schedule a sandbox worker below this process (allowed without privileges: only lower)."""
    if not worker_pid or settings.CODE_SANDBOX_NICE <= 0:
        return
    with contextlib.suppress(OSError):
        current = os.getpriority(os.PRIO_PROCESS, worker_pid)
        target = min(19, os.getpriority(os.PRIO_PROCESS, 0) + settings.CODE_SANDBOX_NICE)
        if current < target:
            os.setpriority(os.PRIO_PROCESS, worker_pid, target)
