"""The process-wide pool of Monty sandbox workers.

Monty always runs code in `monty` worker subprocesses (pydantic-monty's AsyncMonty): a crash of
a worker (segfault, allocator abort, a kill) raises MontyCrashedError for that one call and the
pool replaces the worker, so this process never runs tenant code itself. Workers are reniced
(CODE_SANDBOX_NICE) so that a runaway loop competes for the CPU below the event loop that
answers everyone else's requests. The pool works from any event loop (the web process's, a
test run's, a Celery task's), so one pool per process is enough.
"""

import contextlib
import logging
import os
import threading

from django.conf import settings
from pydantic_monty import AsyncMonty

log = logging.getLogger(__name__)

# How long a call waits for a free worker before it is refused (all busy: a tool error).
CHECKOUT_TIMEOUT_SECONDS = 10.0
# Workers are recycled after this many calls, so nothing lingers in a long-lived worker.
CHECKOUTS_PER_WORKER = 200

_lock = threading.Lock()
_pool: AsyncMonty | None = None
_pid: int | None = None
# Workers each organization holds in this process: no tenant may take every worker.
_held: dict[int | None, int] = {}
WAIT_STEP_SECONDS = 0.02


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


def organization_share() -> int:
    """Workers one organization may hold at once in this process (CODE_SANDBOX_PER_ORG, or all
    workers but one, so another tenant always finds one)."""
    workers = max(1, settings.CODE_SANDBOX_WORKERS)
    share = getattr(settings, "CODE_SANDBOX_PER_ORG", 0) or workers - 1
    return max(1, min(share, workers))


async def hold(organization_id: int | None) -> bool:
    """Take one of the organization's worker slots, waiting up to CHECKOUT_TIMEOUT_SECONDS;
    False when none became free."""
    import asyncio
    import time

    deadline = time.monotonic() + CHECKOUT_TIMEOUT_SECONDS
    while True:
        with _lock:
            if _held.get(organization_id, 0) < organization_share():
                _held[organization_id] = _held.get(organization_id, 0) + 1
                return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(WAIT_STEP_SECONDS)


def let_go(organization_id: int | None) -> None:
    with _lock:
        left = _held.get(organization_id, 0) - 1
        if left > 0:
            _held[organization_id] = left
        else:
            _held.pop(organization_id, None)
