"""Creating, finding, answering and cancelling tasks: what the endpoint calls for tasks/*.

These are sync (Django ORM); the async endpoint wraps them with sync_to_async. A task is seen
only through `get_task`, which matches the organization and the credential that created it, so
a task of another caller reads exactly like one that does not exist.
"""

import asyncio
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from activity.storable import storable_json
from mcp_protocol.caller import Caller
from mcp_protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from mcp_protocol.pagination import paginate
from mcp_protocol.versions import STATELESS

from . import events, principal
from .models import Task
from .wire import is_extension_era

DEFAULT_TTL_MS = 60 * 60 * 1000
MAX_TTL_MS = 24 * 60 * 60 * 1000
MIN_TTL_MS = 10 * 1000
LIST_PAGE_SIZE = 50


def poll_interval_ms() -> int:
    return settings.MCP_TASK_POLL_INTERVAL_MS


def _not_found() -> McpError:
    return McpError(INVALID_PARAMS, "Failed to retrieve task: Task not found")


def effective_ttl_ms(requested) -> int:
    """The TTL the server keeps a task for: the client's wish within [10 s, 24 h]; null (or
    nothing) asks for unlimited, which this server answers with its default of one hour."""
    if requested is None:
        return DEFAULT_TTL_MS
    if isinstance(requested, bool) or not isinstance(requested, int | float) or requested < 0:
        raise McpError(INVALID_PARAMS, "task ttl must be a non-negative number of milliseconds")
    return int(min(max(requested, MIN_TTL_MS), MAX_TTL_MS))


def create_task(
    snapshot,
    tool_name: str,
    arguments: Any,  # from the wire: None or anything; checked below
    credential: Caller | str,
    ttl_ms: int | None = None,
    *,
    protocol_version: str = "",
    client_capabilities: dict | None = None,
    server_version: str = "",
    input_responses: dict | None = None,
    task_id: str | None = None,
    send: bool = True,
) -> Task:
    """Store a task for a tools/call and hand it to a worker once it is committed (unless
    `send` is false: the caller then calls dispatch.send itself, as the MCP endpoint does off
    its database thread, and dispatch.fail_unqueued if that raises). Returns when
    the row is durable, so a tasks/get for its id resolves at once (as the spec requires).
    `server_version` pins the task to that published version (ignored when it is not one, as
    for a server that serves its draft); `input_responses` are answers the client gave before
    the task began (MRTR rounds of the call that created it); `task_id`, when the caller chose
    the id (to listen to the task's events before it can publish any). `credential` is the
    request's `Caller`, kept whole on the row so the worker knows who it runs for; a bare
    credential name (a harness's) keeps only that name."""
    tool = snapshot.tools.get(tool_name)
    if tool is None:
        raise McpError(INVALID_PARAMS, f"Unknown tool: {tool_name}")
    if tool.task_support == "forbidden":
        raise McpError(METHOD_NOT_FOUND, f"Tool {tool_name} does not support task execution")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise McpError(INVALID_PARAMS, "Tool arguments must be an object")
    if storable_json(arguments) != arguments:
        # A task keeps its arguments in Postgres, which cannot hold NUL or lone surrogates;
        # escaping them would run the tool with other arguments than were sent.
        raise McpError(
            INVALID_PARAMS,
            "Tool arguments with NUL characters or lone surrogates cannot run as a task",
        )
    ttl = effective_ttl_ms(ttl_ms)
    refuse_without_workers()
    from servers.models import ServerVersion

    from .dispatch import dispatch

    if (
        server_version
        and not ServerVersion.objects.filter(
            server_id=snapshot.server_id, version=server_version
        ).exists()
    ):
        server_version = ""

    with transaction.atomic():
        task = Task.objects.create(
            **({"id": task_id} if task_id else {}),
            organization_id=snapshot.organization_id,
            server_id=snapshot.server_id,
            server_version=server_version or "",
            **_caller_fields(credential),
            tool_name=tool_name,
            arguments=arguments,
            protocol_version=protocol_version or "",
            client_capabilities=client_capabilities or {},
            input_responses=input_responses or {},
            status=Task.WORKING,
            ttl_ms=ttl,
            poll_interval_ms=poll_interval_ms(),
            expires_at=timezone.now() + timedelta(milliseconds=ttl),
            dispatched_at=None if send else timezone.now(),
        )
        if send:
            transaction.on_commit(lambda: dispatch(task.id))
    return task


def _caller_fields(credential: Caller | str) -> dict[str, object]:
    if isinstance(credential, str):
        return {"credential": credential}
    return principal.row_fields(credential)


def refuse_without_workers() -> None:
    """A task no worker will run is refused now, not left `working` until its TTL runs out."""
    from getmcp.heartbeat import workers_alive

    from .dispatch import in_process

    if not in_process() and not workers_alive():
        raise McpError(
            INTERNAL_ERROR,
            "No task worker is running, so this task cannot start (nothing was queued). "
            "Try again later; the operator must start a Celery worker (`make worker`).",
            {"reason": "no-task-worker"},
        )


def get_task(task_id, organization_id: int, credential: str, server_id: int | None = None) -> Task:
    """The caller's task, or McpError(-32602) when it does not exist, has expired or belongs to
    someone else (all three answer the same, so nothing leaks). With `server_id`, only a task
    of that server."""
    if not isinstance(task_id, str) or not task_id or len(task_id) > 64:
        raise _not_found()
    tasks = Task.objects.filter(pk=task_id, organization_id=organization_id, credential=credential)
    if server_id is not None:
        tasks = tasks.filter(server_id=server_id)
    task = tasks.first()
    if task is None:
        raise _not_found()
    if task.expires_at <= timezone.now():
        task.delete()
        raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
    from .recovery import recover_if_stale

    return recover_if_stale(task)


def list_tasks(
    organization_id: int, credential: str, cursor: str | None = None, server_id: int | None = None
) -> dict:
    """2025-11-25 `tasks/list`: the caller's own live tasks (of one server, with `server_id`),
    newest first."""
    tasks = Task.objects.filter(
        organization_id=organization_id, credential=credential, expires_at__gt=timezone.now()
    )
    if server_id is not None:
        tasks = tasks.filter(server_id=server_id)
    ids = list(tasks.order_by("-created_at", "id").values_list("id", flat=True))
    page, next_cursor = paginate(ids, cursor, LIST_PAGE_SIZE)
    by_id = Task.objects.in_bulk(page)
    result = {"tasks": [by_id[task_id] for task_id in page if task_id in by_id]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def update_task(task: Task, input_responses) -> list[str]:
    """Record the client's answers to outstanding input requests (tasks/update). Answered keys
    leave `inputRequests` at once (the next tasks/get shows only what is still pending) and the
    task is working again when none is left. Answers to keys that are not outstanding are
    ignored, as the spec asks; returns the keys taken."""
    if not isinstance(input_responses, dict):
        raise McpError(INVALID_PARAMS, "inputResponses must be an object")
    with transaction.atomic():
        row = Task.objects.select_for_update().filter(pk=task.pk).first()
        if row is None or row.is_terminal:
            return []
        taken = {
            key: value
            for key, value in input_responses.items()
            if key in row.input_requests and key not in row.input_responses
        }
        if taken:
            row.input_responses = {**row.input_responses, **taken}
            row.input_requests = {k: v for k, v in row.input_requests.items() if k not in taken}
            if not row.input_requests:
                row.status = Task.WORKING
                row.status_message = ""
            row.save()
            transaction.on_commit(lambda: (events.wake(row.pk), events.publish_status(row)))
    task.input_responses = row.input_responses
    task.input_requests = row.input_requests
    task.status = row.status
    return sorted(taken)


def cancel_task(
    task: Task, era: str = STATELESS, *, message: str = "Cancelled at the client's request."
) -> Task:
    """Mark the task cancelled now and ask its worker to stop (it checks at every sleep, every
    client request and while it waits). Cancelling a task that already ended changes nothing:
    the tasks extension acknowledges it (idempotent), 2025-11-25 core tasks answer -32602."""
    with transaction.atomic():
        row = Task.objects.select_for_update().filter(pk=task.pk).first()
        if row is None:
            raise _not_found()
        if row.is_terminal:
            if is_extension_era(era):
                return row
            raise McpError(INVALID_PARAMS, f"Cannot cancel task: it is already {row.status}")
        row.status = Task.CANCELLED
        row.status_message = message
        row.cancel_requested = True
        row.input_requests = {}
        row.save()
        transaction.on_commit(lambda: (events.wake(row.pk), events.publish_status(row)))
    return row


async def wait_for_task(
    task_id: str, organization_id: int, credential: str, *, timeout: float, statuses=Task.TERMINAL
) -> Task:
    """Poll until the task reaches one of `statuses` (2025-11-25 `tasks/result` blocks on this)
    or `timeout` seconds pass; returns the task as it then is."""
    from servers.db import run as run_db

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        task = await run_db(get_task, task_id, organization_id, credential)
        if task.status in statuses or loop.time() >= deadline:
            return task
        await asyncio.sleep(min(task.poll_interval_ms / 1000, max(deadline - loop.time(), 0)))
