"""MCP Tasks on /mcp/<slug>, in both designs MCP has had (mcptasks holds the tasks themselves).

- Session era, 2025-11-25 experimental core tasks: a `tools/call` with `params.task` answers
  `CreateTaskResult {task}` at once; `tasks/get`, `tasks/result` (blocks; the task's questions go
  to the client on the call's own stream), `tasks/list`, `tasks/cancel`.
- Stateless era, 2026-07-28 extension io.modelcontextprotocol/tasks: the server decides; a call
  whose request declares the extension, to a tool that allows tasks, answers `{resultType:
  "task", ...}`; `tasks/get`, `tasks/update`, `tasks/cancel`; status via subscriptions/listen.

Every lookup matches the server, organization and credential the task was created with, so
another caller's task reads exactly like one that does not exist.
"""

import asyncio
from typing import Any, NoReturn, cast

import orjson
from django.conf import settings
from redis.asyncio import Redis

from infra import keys as rkeys
from infra import session_streams
from infra.hub import hub
from mcp_protocol import errors, versions
from mcp_protocol.errors import MISSING_CLIENT_CAPABILITY, McpError
from mcp_protocol.jsonrpc import Request
from mcptasks import lifecycle
from mcptasks.core import core_task_result
from mcptasks.events import CORE_ERA, EXTENSION_ERA, events_channel
from mcptasks.models import Task
from mcptasks.wire import (
    EXTENSION,
    RELATED_TASK,
    create_task_result,
    status_notification,
    task_wire,
)
from servers.compiled.snapshot import CompiledTool
from servers.db import run as run_db
from servers.kinds.workflow import StartTask
from servers.snapshot import Snapshot

from ..pipeline.dispatch import Handler
from ..pipeline.served import Served
from .context import SessionContext
from .gate import start_background
from .sessions import Session
from .stateless.envelope import META_CAPABILITIES
from .stateless.responder import StatelessCall
from .task_start import begin_task

SESSION_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
TASK_IDS_LIMIT = 100
# A session hears of a task's status changes on its GET stream for at most this long.
RELAY_SECONDS = 3600


def uses_tasks(snapshot: Snapshot) -> bool:
    return any(tool.task_support != "forbidden" for tool in snapshot.tools.values())


def _tool(snapshot: Snapshot, params: dict[str, Any]) -> CompiledTool | None:
    name = params.get("name")
    return snapshot.tools.get(name) if isinstance(name, str) else None


def _find(served: Served, task_id: Any) -> Task:
    return lifecycle.get_task(
        task_id,
        served.snapshot.organization_id,
        served.caller.ident,
        server_id=served.snapshot.server_id,
    )


# -- session era (2025-11-25 core tasks) --------------------------------------------------------


def session_capabilities(snapshot: Snapshot, protocol_version: str) -> dict[str, Any]:
    """initialize's capabilities: the snapshot's, plus `tasks` for a 2025-11-25 session when a
    tool of this server may run as a task."""
    capabilities = dict(snapshot.capabilities)
    if versions.has_core_tasks(protocol_version) and uses_tasks(snapshot):
        capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    return capabilities


async def session_call(
    served: Served, session: Session, request: Request, ctx: SessionContext
) -> dict[str, Any] | None:
    """The answer to a session-era tasks/* request or task-augmented tools/call; None for a
    tools/call that runs the ordinary way."""
    params = request.params
    if request.method == "tools/call":
        return await _session_tools_call(served, session, params, ctx)
    if not versions.has_core_tasks(session.protocol_version):
        raise errors.method_not_found(request.method)
    task_id = params.get("taskId")
    snapshot = served.snapshot
    if request.method == "tasks/list":
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise errors.invalid_params("cursor must be a string")
        page: dict[str, Any] = await run_db(
            lifecycle.list_tasks,
            snapshot.organization_id,
            served.caller.ident,
            cursor,
            server_id=snapshot.server_id,
        )
        page["tasks"] = [task_wire(task, CORE_ERA) for task in page["tasks"]]
        return page
    task = await run_db(_find, served, task_id)
    if request.method == "tasks/get":
        return task_wire(task, CORE_ERA)
    if request.method == "tasks/cancel":
        task = await run_db(lifecycle.cancel_task, task, CORE_ERA)
        return {**task_wire(task, CORE_ERA), "_meta": _related(task)}
    return await core_task_result(task.id, snapshot.organization_id, served.caller.ident, ctx)


def _related(task: Task) -> dict[str, Any]:
    return {RELATED_TASK: {"taskId": task.id}}


async def _session_tools_call(
    served: Served, session: Session, params: dict[str, Any], ctx: SessionContext
) -> dict[str, Any] | None:
    tool = _tool(served.snapshot, params)
    if tool is None:
        return None
    augmented = versions.has_core_tasks(session.protocol_version) and "task" in params
    if not augmented:
        if tool.task_support == "required":
            raise McpError(
                errors.METHOD_NOT_FOUND,
                f"Tool {tool.name} must be called as a task (params.task)",
            )
        return None
    hint = params["task"]
    if not isinstance(hint, dict):
        raise errors.invalid_params("params.task must be an object")
    if tool.task_support == "forbidden":
        raise McpError(errors.METHOD_NOT_FOUND, f"Tool {tool.name} does not support task execution")
    task = await begin_task(
        served,
        tool,
        params,
        era=session.protocol_version,
        capabilities=session.capabilities,
        ttl=hint.get("ttl"),
    )
    ctx.task_id = task.id  # the call's log row is the task's (activity/amendments.py)
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    start_background(
        relay_status(served.redis, session.sid, task.id, progress_token=_token_or_none(token))
    )
    return {**create_task_result(task, CORE_ERA), "_meta": _related(task)}


def _token_or_none(token: Any) -> str | int | None:
    # A progress token is a string or an integer (booleans are not); anything else is ignored.
    if isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool)):
        return token
    return None


def _progress_notification(event: dict[str, Any], token: str | int) -> dict[str, Any]:
    params = {"progressToken": token, "progress": event.get("progress")}
    if event.get("total") is not None:
        params["total"] = event["total"]
    if event.get("message") is not None:
        params["message"] = event["message"]
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


async def _queue_on_get_stream(
    redis: Redis, sid: str, note: dict[str, Any], task_id: str | None = None
) -> None:
    task_id = task_id or note["params"]["taskId"]
    note = {**note, "params": {**note["params"], "_meta": {RELATED_TASK: {"taskId": task_id}}}}
    pipe = redis.pipeline(transaction=False)
    session_streams.append(
        pipe,
        sid,
        "get",
        {"d": orjson.dumps(note)},
        maxlen=1000,
        ttl_seconds=settings.MCP_SESSION_IDLE_SECONDS,
    )
    await pipe.execute()


async def relay_status(
    redis: Redis, sid: str, task_id: str, progress_token: str | int | None = None
) -> None:
    """notifications/tasks/status on the session's GET stream until the task ends, the session
    does, or RELAY_SECONDS pass; with the call's `progress_token`, its progress too (the spec
    keeps the original request's token for the task's whole life). Best effort: a web worker
    that restarts stops relaying, and the client's polling still sees every change."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + RELAY_SECONDS
    inbox: asyncio.Queue[Any] = asyncio.Queue()
    # On the process's one subscriber (infra/hub.py), not a connection of its own.
    subscription = await hub().listen(
        [events_channel(task_id)], lambda _channel, data: inbox.put_nowait(data)
    )
    try:
        # What happened before the subscription (a quick task may already have ended).
        task = await run_db(Task.objects.filter(pk=task_id).first)
        if task is None:
            return
        if task.status != Task.WORKING:
            await _queue_on_get_stream(redis, sid, status_notification(task, CORE_ERA))
            if task.is_terminal:
                return
        while loop.time() < deadline:
            try:
                data = await asyncio.wait_for(inbox.get(), 30)
            except TimeoutError:
                if not await redis.exists(rkeys.session(sid)):
                    return
                continue
            if data is None:  # the hub reconnected: status changes may have been missed
                task = await run_db(Task.objects.filter(pk=task_id).first)
                if task is None or task.is_terminal:
                    if task is not None:
                        await _queue_on_get_stream(redis, sid, status_notification(task, CORE_ERA))
                    return
                continue
            event = orjson.loads(data)
            if event.get("type") == "progress" and progress_token is not None:
                progress = _progress_notification(event, progress_token)
                await _queue_on_get_stream(redis, sid, progress, task_id)
                continue
            note = (event.get("notifications") or {}).get(CORE_ERA)
            if event.get("type") != "status" or note is None:
                continue
            await _queue_on_get_stream(redis, sid, note)
            if note["params"]["status"] in Task.TERMINAL:
                return
    finally:
        await asyncio.shield(subscription.close())


# -- stateless era (extension io.modelcontextprotocol/tasks) ------------------------------------


def declares_extension(capabilities: Any) -> bool:
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def missing_extension() -> McpError:
    return McpError(
        MISSING_CLIENT_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
        http_status=400,
    )


def _require_extension(call: StatelessCall) -> None:
    if not declares_extension(call.envelope.capabilities):
        raise missing_extension()


async def session_layer(call: Any, inner: Handler) -> dict[str, Any]:
    """The session era's tasks layer of tools/call: a task-augmented call becomes a task; any
    other goes on inside."""
    result = await session_call(call.served, call.session, call.request, call.context)
    if result is not None:
        return result
    return await inner(call)


async def stateless_layer(call: StatelessCall, inner: Handler) -> dict[str, Any]:
    """The stateless era's tasks layer of tools/call: a task when the request declares the
    extension and the tool allows one; a `task` step in a workflow first runs what comes before
    it inside, asking through MRTR."""
    tool = _tool(call.snapshot, call.request.params)
    if tool is None or tool.task_support == "forbidden":
        return await inner(call)
    if not declares_extension(call.envelope.capabilities):
        # SEP-2663: a tool that must run as a task is refused to a client without the extension
        # (-32021), long calls or not; an optional one may still wait for its task
        # (gateway/agents/longcalls.py).
        if tool.task_support == "required":
            raise missing_extension()
        return await inner(call)
    answers: dict[str, Any] = {}
    if _has_task_step(tool):
        ctx = call.context

        def start_task() -> NoReturn:
            raise StartTask(dict(ctx.used_answers))

        ctx.start_task = start_task
        try:
            return await inner(call)
        except StartTask as started:
            answers = started.answers
    task = await begin_task(
        call.served,
        tool,
        call.request.params,
        era=call.envelope.protocol_version,
        capabilities=call.envelope.capabilities,
        answers=answers,
    )
    call.context.task_id = task.id  # the call's log row is the task's (activity/amendments.py)
    return create_task_result(task, EXTENSION_ERA)


def _has_task_step(tool: CompiledTool) -> bool:
    return tool.kind.asks_before_task(tool.compiled)


async def stateless_get(call: StatelessCall) -> dict[str, Any]:
    _require_extension(call)
    task = await run_db(_find, call.served, call.request.params.get("taskId"))
    return task_wire(task, EXTENSION_ERA)


async def stateless_update(call: StatelessCall) -> dict[str, Any]:
    _require_extension(call)
    responses = call.request.params.get("inputResponses")
    if not isinstance(responses, dict):
        raise errors.invalid_params("inputResponses must be an object")
    task = await run_db(_find, call.served, call.request.params.get("taskId"))
    await run_db(lifecycle.update_task, task, responses)
    return {}


async def stateless_cancel(call: StatelessCall) -> dict[str, Any]:
    _require_extension(call)
    task = await run_db(_find, call.served, call.request.params.get("taskId"))
    await run_db(lifecycle.cancel_task, task, EXTENSION_ERA)
    return {}


# -- subscriptions/listen {notifications: {taskIds}} --------------------------------------------


def _own_task_ids(served: Served, task_ids: list[str]) -> list[str]:
    found = set(
        Task.objects.filter(
            pk__in=task_ids,
            server_id=served.snapshot.server_id,
            organization_id=served.snapshot.organization_id,
            credential=served.caller.ident,
        ).values_list("pk", flat=True)
    )
    return [task_id for task_id in task_ids if task_id in found]


async def listen_task_ids(served: Served, request: Request, requested: dict[str, Any]) -> list[str]:
    """The task ids of a listen filter this caller may follow; -32021 when the request asks
    for some without declaring the extension, -32602 for a malformed list."""
    task_ids = requested.get("taskIds")
    if task_ids is None:
        return []
    if not isinstance(task_ids, list) or not all(isinstance(item, str) for item in task_ids):
        raise errors.invalid_params("notifications.taskIds must be a list of task ids")
    if len(task_ids) > TASK_IDS_LIMIT:
        raise errors.invalid_params(f"notifications.taskIds takes at most {TASK_IDS_LIMIT} ids")
    meta = request.params.get("_meta") or {}
    if not declares_extension(meta.get(META_CAPABILITIES)):
        raise missing_extension()
    if not task_ids:
        return []
    own: list[str] = await run_db(_own_task_ids, served, list(dict.fromkeys(task_ids)))
    return own


def task_channels(task_ids: list[str]) -> list[str]:
    return [events_channel(task_id) for task_id in task_ids]


def listen_notification(event: dict[str, Any]) -> dict[str, Any] | None:
    """The notifications/tasks message of a task status event (None for other events)."""
    if event.get("type") != "status":
        return None
    return cast(dict[str, Any] | None, (event.get("notifications") or {}).get(EXTENSION_ERA))
