"""Running one task to its end: claim it, run the tool with a TaskContext, store the outcome.

The same coroutine runs in a Celery worker and on the embedded in-process executor. A run keeps
a heartbeat on the row; a run whose heartbeat stops (its worker died) is picked up by the reaper
(recovery.py), which starts it again or fails it, so no task stays `working` forever.
Delivering one task twice is harmless: only a run that claims the row (non-terminal, no live
heartbeat) goes on.
"""

import asyncio
import logging
from collections.abc import Callable, Mapping
from contextlib import suppress
from datetime import timedelta
from types import MappingProxyType
from typing import NamedTuple

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone
from redis.exceptions import RedisError

from activity import amendments
from infra.redis import async_client, async_cluster, async_standalone, is_cluster, is_embedded
from mcp_protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, Cancelled, InputRequired, McpError
from servers import access

from . import events, fairness, principal
from .context import TaskContext
from .models import Task

log = logging.getLogger(__name__)

HandOn = Callable[[int, float], int]

ACTIVE = (Task.WORKING, Task.INPUT_REQUIRED)


def heartbeat_seconds() -> float:
    return settings.MCP_TASK_HEARTBEAT_SECONDS


def stale_after_seconds() -> float:
    """A run whose heartbeat is older than this is taken for dead."""
    return settings.MCP_TASK_STALE_SECONDS


def queue_patience_seconds() -> float:
    """A dispatched task no run has claimed after this long is dispatched again."""
    return settings.MCP_TASK_QUEUE_PATIENCE_SECONDS


def max_attempts() -> int:
    return settings.MCP_TASK_MAX_ATTEMPTS


# Poll the row this often for cancellation and answers when no Redis wake-up arrives.
WATCH_SECONDS = 0.5
# How long a tool gets to stop on its own after a cancel before it is interrupted.
CANCEL_GRACE_SECONDS = 2.0


def _redis():
    # A client of our own in a worker: each run has its own event loop, and the per-loop client
    # of infra.redis would outlive it. Embedded mode shares the in-process fake server.
    if is_embedded():
        return async_client()
    if is_cluster():
        return async_cluster()
    return async_standalone()


def _db(fn):
    return sync_to_async(fn, thread_sensitive=True)


# -- row changes (sync, each in its own transaction) ---------------------------------------------


def claim(task_id: str, delivery_id: str = "") -> Task | None:
    """Take the task for this run, or None when it is finished, expired (a task never starts
    after its TTL, however long it waited in the queue), alive elsewhere, or deferred because
    its organization already runs its share of tasks (fairness.py)."""
    now = timezone.now()
    with transaction.atomic():
        task = Task.objects.select_for_update().filter(pk=task_id).first()
        if task is None or task.status not in ACTIVE:
            return None
        stale = now - timedelta(seconds=stale_after_seconds())
        if task.heartbeat_at is not None and task.heartbeat_at > stale:
            return None
        if task.expires_at <= now:
            end_locked(
                task, Task.FAILED, error=_error(INTERNAL_ERROR, "Task expired before it ran")
            )
            return None
        if task.attempts >= max_attempts():
            end_locked(task, Task.FAILED, error=worker_lost_error(task.attempts))
            return None
        fairness.lock_organization(task.organization_id)
        running = fairness.running(task.organization_id, stale_after_seconds(), excluding=task.pk)
        if running >= fairness.per_org_cap(task.organization_id):
            fairness.defer_locked(task)
            return None
        task.attempts += 1
        task.heartbeat_at = now
        if task.status_message == fairness.DEFERRED_MESSAGE:
            task.status_message = ""
        if delivery_id:
            task.celery_task_id = delivery_id
        task.save(update_fields=["attempts", "heartbeat_at", "celery_task_id", "status_message"])
        return task


def worker_lost_error(attempts: int) -> dict:
    return _error(
        INTERNAL_ERROR,
        f"The worker running this task stopped; gave up after {attempts} attempt"
        f"{'s' if attempts != 1 else ''}",
    )


def _error(code: int, message: str, data=None) -> dict:
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return error


def end_locked(task: Task, status: str, *, result=None, error=None, message: str = "") -> None:
    """Inside a transaction holding the row lock."""
    task.status = status
    task.result = result
    task.error = error
    task.status_message = message or (error or {}).get("message", "")
    task.input_requests = {}
    task.heartbeat_at = None
    task.save()
    transaction.on_commit(lambda: events.publish_status(task))


def finish(task_id: str, status: str, *, result=None, error=None, message: str = "") -> bool:
    """Store the outcome unless the task already ended (a cancel wins over a late result)."""
    with transaction.atomic():
        task = Task.objects.select_for_update().filter(pk=task_id).first()
        if task is None:
            return False
        if task.status not in ACTIVE:
            # Already ended (cancelled): record only that no run is going on any more.
            Task.objects.filter(pk=task_id).update(heartbeat_at=None)
            return False
        end_locked(task, status, result=result, error=error, message=message)
        return True


def park_request(task_id: str, key: str, method: str, params: dict) -> None:
    with transaction.atomic():
        task = Task.objects.select_for_update().filter(pk=task_id).first()
        if task is None or task.status not in ACTIVE:
            return
        task.input_requests = {**task.input_requests, key: {"method": method, "params": params}}
        task.status = Task.INPUT_REQUIRED
        task.status_message = f"Waiting for the client to answer {method}."
        task.save(update_fields=["input_requests", "status", "status_message", "updated_at"])
        transaction.on_commit(lambda: events.publish_status(task))


def settle_request(task_id: str, key: str) -> None:
    with transaction.atomic():
        task = Task.objects.select_for_update().filter(pk=task_id).first()
        if task is None or task.status not in ACTIVE or key not in task.input_requests:
            return
        task.input_requests = {k: v for k, v in task.input_requests.items() if k != key}
        if not task.input_requests:
            task.status = Task.WORKING
            task.status_message = ""
        task.save(update_fields=["input_requests", "status", "status_message", "updated_at"])
        transaction.on_commit(lambda: events.publish_status(task))


def observe(task_id: str, beat: bool, message: str | None = None):
    """(cancel requested or gone, input responses) of the row; refreshes the heartbeat, and
    stores `message` (the tool's latest progress message) as the working task's statusMessage."""
    if beat:
        Task.objects.filter(pk=task_id, status__in=ACTIVE).update(heartbeat_at=timezone.now())
    if message is not None:
        # Only while working: a question waiting for the client, or the end, says more.
        Task.objects.filter(pk=task_id, status=Task.WORKING).update(
            status_message=message, updated_at=timezone.now()
        )
    row = Task.objects.filter(pk=task_id).values("status", "cancel_requested", "input_responses")
    row = row.first()
    if row is None:
        return True, {}
    return row["cancel_requested"] or row["status"] == Task.CANCELLED, row["input_responses"]


def load_task_snapshot(task: Task):
    """The snapshot the call was made against: the pinned published version, else the served one."""
    from servers.snapshot import compile_definition, load_snapshot

    if task.server_version:
        from servers.publishing import definition_to_serve

        server = task.server
        definition = definition_to_serve(server, task.server_version)
        if definition is None:
            return None
        return compile_definition(
            definition,
            server_id=server.pk,
            organization_id=server.organization_id,
            generation=f"v{task.server_version}",
            owner_id=server.organization.billing_owner_id,
        )
    snapshot = load_snapshot(task.server.slug)
    if snapshot is None or snapshot.server_id != task.server_id:
        return None
    return snapshot


class RoleOnly(NamedTuple):
    """What servers.access narrows by, for a run: the role alone (the key's own limits were
    applied when the task was submitted)."""

    role: str
    access: Mapping[int, object] = MappingProxyType({})


# -- the run --------------------------------------------------------------------------------------


async def _wait_for_wake(redis, task_id: str) -> None:
    if is_embedded():
        await asyncio.sleep(WATCH_SECONDS)
        return
    try:
        await redis.blpop([events.wake_list(task_id)], timeout=WATCH_SECONDS)
    except RedisError:
        # The wake-up only saves a wait: while Redis fails over, the row is polled on the clock
        # and the heartbeat goes on.
        await asyncio.sleep(WATCH_SECONDS)


async def _watch(task_id: str, ctx: TaskContext, call: asyncio.Future, redis) -> None:
    loop = asyncio.get_running_loop()
    next_beat = loop.time() + heartbeat_seconds()
    cancel_deadline = None
    stored_message = None
    while not call.done():
        await _wait_for_wake(redis, task_id)
        beat = loop.time() >= next_beat
        if beat:
            next_beat = loop.time() + heartbeat_seconds()
        # A new progress message goes to the row with this tick's read: one write per tick at
        # most, however often the tool reports.
        message = ctx.progress_message if ctx.progress_message != stored_message else None
        cancelled, responses = await _db(observe)(task_id, beat, message)
        if message is not None:
            stored_message = message
        ctx.observe(responses=responses, cancelled=cancelled)
        if cancelled:
            cancel_deadline = cancel_deadline or loop.time() + CANCEL_GRACE_SECONDS
            if loop.time() >= cancel_deadline:
                call.cancel()


async def _runnable(task: Task):
    """(the snapshot the task runs on, as its caller's role sees it now, and that caller), or
    the error that fails the task."""
    from servers.snapshot import DefinitionError

    try:
        snapshot = await _db(load_task_snapshot)(task)
    except DefinitionError:
        return _error(INTERNAL_ERROR, "The server's definition cannot be served right now")
    try:
        caller = await _db(principal.at_execution)(task)
    except principal.PrincipalGone as gone:
        return gone.to_dict()
    if snapshot is not None:
        # The server as the caller's role sees it now (a lowered role hides what it may not call).
        snapshot = access.scoped(snapshot, RoleOnly(caller.role))
    if snapshot is None or task.tool_name not in snapshot.tools:
        return _error(INVALID_PARAMS, f"Unknown tool: {task.tool_name}")
    return snapshot, caller


async def _run_tool(task: Task, redis) -> tuple[str, dict]:
    """(status, outcome) where outcome is {"result": ...}, {"error": ...} or {}."""
    from servers.methods import call_method

    runnable = await _runnable(task)
    if isinstance(runnable, dict):
        return Task.FAILED, {"error": runnable}
    snapshot, caller = runnable

    async def park(key, method, params) -> None:
        await _db(park_request)(task.id, key, method, params)

    async def settle(key) -> None:
        await _db(settle_request)(task.id, key)

    ctx = TaskContext(task, redis, park, settle, caller)
    params = {"name": task.tool_name, "arguments": task.arguments}

    async def rounds() -> dict:
        # Each round runs the tool from the top with every answer so far, as MRTR does.
        while True:
            try:
                return await call_method(snapshot, "tools/call", params, ctx)
            except InputRequired as exc:
                await ctx.wait_for_answers(exc.input_requests)

    call = asyncio.ensure_future(rounds())
    watcher = asyncio.ensure_future(_watch(task.id, ctx, call, redis))
    try:
        return Task.COMPLETED, {"result": await call}
    except (Cancelled, asyncio.CancelledError):
        return Task.CANCELLED, {}
    except McpError as exc:
        return Task.FAILED, {"error": exc.to_dict()}
    finally:
        watcher.cancel()
        with suppress(asyncio.CancelledError, Exception):
            await watcher
        # The call was logged when it was submitted, before any tool ran: its row learns here
        # the connected accounts this run acted through, whatever the run's end.
        amendments.name_connections(task_id=task.id, connections=ctx.connections_used)


async def run(task_id: str, delivery_id: str = "", *, hand_on: HandOn) -> str | None:
    """Run one task to its end; returns the status it ended with (None: not this run's to do).

    `hand_on(organization_id, stale_after)` gives the slot this run held to the next task
    (dispatch.dispatch_waiting: the runner does not import the dispatcher that imports it)."""
    async with ThreadSensitiveContext():
        try:
            task = await _db(claim)(task_id, delivery_id)
            if task is None:
                return None
            redis = _redis()
            try:
                status, outcome = await _run_tool(task, redis)
            except Exception:
                log.exception("task %s failed inside the runner", task_id)
                status, outcome = Task.FAILED, {"error": _error(INTERNAL_ERROR, "Internal error")}
            finally:
                if not is_embedded():
                    await redis.aclose()
            message = "Cancelled." if status == Task.CANCELLED else ""
            await _db(finish)(task_id, status, message=message, **outcome)
            # The slot this run held goes to the organization's oldest deferred task.
            await _db(hand_on)(task.organization_id, stale_after_seconds())
            return status
        finally:
            await _db(connections.close_all)()


def run_sync(task_id: str, delivery_id: str = "", *, hand_on: HandOn) -> str | None:
    return asyncio.run(run(task_id, delivery_id, hand_on=hand_on))
