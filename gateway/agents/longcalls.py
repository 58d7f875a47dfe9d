"""Task-capable tools for clients without Tasks: the same Celery task, waited on for a while.

A client that did not negotiate Tasks (a session without the `tasks` capability and without
`params.task`; a 2026-07-28 request without the tasks extension) calling a tool whose
`execution.taskSupport` is optional or required gets a task created for it, exactly as a Tasks
client would, and the call waits for it up to the server's `longCalls.waitSeconds`, relaying the
task's progress under the call's progressToken (which keeps most clients from timing out). Done
in time: the call answers the task's result. Not done: it answers a handle, and the provided
tools getmcp_task_status / getmcp_task_result / getmcp_task_cancel follow it (tasks/cancel on
the handle works too, and so does notifications/cancelled while the call waits).

The 2026-07-28 era refuses a `required` tool to a client without the extension (-32021,
SEP-2663; gateway/endpoint/tasks.py) before it gets here, so only its optional tools wait.

Tools whose workflow has a `task` step keep their own protocol (they ask before the task), and
an optional tool with no worker alive runs inline as before.
"""

import asyncio

import orjson

from infra.hub import Subscription, hub
from mcp_protocol.context import RequestContext
from mcp_protocol.errors import Cancelled, McpError, ToolError
from mcptasks import lifecycle
from mcptasks.events import events_channel
from mcptasks.models import Task, new_task_id
from mcptasks.wire import EXTENSION, RELATED_TASK
from servers.db import run as run_db

from ..pipeline.served import Served

STATUS, RESULT, CANCEL = "getmcp_task_status", "getmcp_task_result", "getmcp_task_cancel"
HANDLE_SCHEMA = {
    "type": "object",
    "properties": {"handle": {"type": "string", "description": "The handle a long call gave."}},
    "required": ["handle"],
}
TOOLS = tuple(
    [
        {
            "name": STATUS,
            "title": "Status of a long call",
            "description": "Whether a long call that answered with a handle is still working, "
            "completed, failed or cancelled. Does not wait.",
            "inputSchema": HANDLE_SCHEMA,
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
        },
        {
            "name": RESULT,
            "title": "Result of a long call",
            "description": "The result of a long call that answered with a handle: waits a "
            "while for it, and says so when it is still working.",
            "inputSchema": HANDLE_SCHEMA,
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
        },
        {
            "name": CANCEL,
            "title": "Cancel a long call",
            "description": "Stop a long call that answered with a handle.",
            "inputSchema": HANDLE_SCHEMA,
            "annotations": {"destructiveHint": True, "openWorldHint": False},
        },
    ]
)
NAMES = frozenset(tool["name"] for tool in TOOLS)
# How often the wait looks at the task row besides listening to its events.
POLL_SECONDS = 1.0


def _stateless(ctx: RequestContext) -> bool:
    # The session era's context is bound to a session; a 2026-07-28 request's is not.
    return not ctx.in_session


def client_has_tasks(ctx, params: dict) -> bool:
    capabilities = ctx.client_capabilities or {}
    if _stateless(ctx):
        extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
        return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)
    return "tasks" in capabilities or "task" in params


def _has_task_step(tool) -> bool:
    """A workflow with a `task` step asks its questions first, then becomes a task itself."""
    return tool.kind.asks_before_task(tool.compiled)


def eligible(snapshot, tool) -> bool:
    return (
        tool is not None
        and tool.task_support != "forbidden"
        and snapshot.agents.wait_seconds > 0
        and not _has_task_step(tool)
    )


def offered(snapshot, ctx, params: dict) -> bool:
    """Whether tools/list shows the provided tools to this client."""
    if snapshot.agents.wait_seconds <= 0 or client_has_tasks(ctx, params):
        return False
    return any(eligible(snapshot, tool) for tool in snapshot.tools.values())


def _workers_or_required(tool) -> bool:
    from getmcp.heartbeat import workers_alive
    from mcptasks.dispatch import in_process

    return tool.task_support == "required" or in_process() or workers_alive()


async def maybe_call(served: Served, request, ctx) -> dict | None:
    """The answer to a tools/call that goes the long-call way; None for every other call."""
    snapshot = served.snapshot
    params = request.params
    name = params.get("name")
    tool = snapshot.tools.get(name) if isinstance(name, str) else None
    if tool is None or not eligible(snapshot, tool) or client_has_tasks(ctx, params):
        return None
    arguments = params.get("arguments")
    if arguments is not None and isinstance(arguments, dict):
        errors = list(tool.input_validator.iter_errors(arguments))
        if errors:
            return None  # the ordinary path answers the validation error, as for any call
    if not await run_db(_workers_or_required, tool):
        return None
    # Listen before the task exists: a worker may publish its first progress before a
    # subscription made after the task was handed over would be in place.
    task_id = new_task_id()
    events = await _listen(task_id)
    try:
        task = await run_db(
            lifecycle.create_task,
            snapshot,
            tool.name,
            arguments,
            served.caller,
            None,
            protocol_version=ctx.protocol_version,
            client_capabilities=dict(ctx.client_capabilities or {}),
            server_version=str(snapshot.server_info.get("version") or ""),
            task_id=task_id,
        )
    except BaseException:
        await asyncio.shield(events[0].close())
        raise
    ctx.task_id = task.id  # the call's log row is the task's (activity/amendments.py)
    return await wait(served, task.id, ctx, tool=tool, events=events)


def _find(served: Served, handle) -> Task:
    return lifecycle.get_task(
        handle,
        served.snapshot.organization_id,
        served.caller.ident,
        server_id=served.snapshot.server_id,
    )


async def _row(served: Served, handle) -> Task:
    try:
        return await run_db(_find, served, handle)
    except McpError:
        raise ToolError(f"Unknown or expired handle: {handle!r}") from None


def _outcome(task: Task) -> dict:
    if task.status == Task.COMPLETED:
        result = dict(task.result or {})
        result["_meta"] = {**(result.get("_meta") or {}), RELATED_TASK: {"taskId": task.id}}
        return result
    if task.status == Task.FAILED:
        error = task.error or {"code": -32603, "message": task.status_message or "Task failed"}
        raise McpError(error["code"], error["message"], error.get("data"))
    raise ToolError(f"The call was cancelled (handle {task.id}).")


def handoff(task: Task, waited: float, tool=None) -> dict:
    text = (
        f"This call is still running after {waited:.0f} s and goes on in the background. "
        f"Its handle is {task.id}. Check it with {STATUS}, fetch the result with {RESULT} "
        f"(it waits a while for it), or stop it with {CANCEL}; each takes "
        f'{{"handle": "{task.id}"}}.'
    )
    if task.status == Task.INPUT_REQUIRED:
        text += " It is waiting for input this client cannot give here."
    result = {
        "content": [{"type": "text", "text": text}],
        "_meta": {"getmcp/handle": task.id, RELATED_TASK: {"taskId": task.id}},
    }
    if tool is None or tool.output_validator is None:
        result["structuredContent"] = {
            "handle": task.id,
            "status": task.status,
            "statusTool": STATUS,
            "resultTool": RESULT,
            "cancelTool": CANCEL,
        }
    return result


async def _listen(task_id: str) -> tuple[Subscription, asyncio.Queue[bytes | None]]:
    """The task's events, on the process's one subscriber (infra/hub.py), not a connection of
    its own; None in the queue when the hub reconnected and events may have been missed."""
    inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
    subscription = await hub().listen(
        [events_channel(task_id)], lambda _channel, data: inbox.put_nowait(data)
    )
    return subscription, inbox


async def wait(
    served: Served,
    task_id: str,
    ctx,
    *,
    tool=None,
    owns_task: bool = True,
    events: tuple[Subscription, asyncio.Queue[bytes | None]] | None = None,
) -> dict:
    """Wait for the task up to the server's limit, relaying progress; its outcome or a handle.
    A cancelled call that started the task (notifications/cancelled, or a stateless client
    gone) cancels the task; a cancelled getmcp_task_result only stops waiting."""
    seconds = float(served.snapshot.agents.wait_seconds)
    loop = asyncio.get_running_loop()
    started = loop.time()
    deadline = started + seconds
    subscription, inbox = events if events is not None else await _listen(task_id)
    # The session era hears of a cancellation through Redis; ctx.sleep raises Cancelled on it.
    watcher = None if _stateless(ctx) else asyncio.ensure_future(ctx.sleep(seconds + 1))
    try:
        task = await _row(served, task_id)
        next_poll = loop.time() + POLL_SECONDS
        while not task.is_terminal and loop.time() < deadline:
            _raise_if_cancelled(watcher)
            if task.status == Task.INPUT_REQUIRED and not _stateless(ctx):
                await _ask_client(task, ctx)
                task = await _row(served, task_id)
                continue
            timeout = max(0.0, min(0.25, deadline - loop.time()))
            if await _take_event(inbox, timeout, ctx):
                next_poll = 0
            if loop.time() >= next_poll:
                task = await _row(served, task_id)
                next_poll = loop.time() + POLL_SECONDS
        _raise_if_cancelled(watcher)
        if task.is_terminal:
            return _outcome(task)
        return handoff(task, loop.time() - started, tool)
    except (Cancelled, asyncio.CancelledError):
        if owns_task:
            await _cancel_quietly(served, task_id)
        raise
    finally:
        if watcher is not None:
            watcher.cancel()
        await asyncio.shield(subscription.close())


async def _take_event(inbox: asyncio.Queue, timeout: float, ctx) -> bool:
    """Relay the task's next event, if one comes within `timeout`, to the client as progress.
    True when the task's row must be read again now: its status changed, or the hub reconnected
    and events may have been missed."""
    try:
        data = (
            inbox.get_nowait()
            if not inbox.empty()
            else await asyncio.wait_for(inbox.get(), timeout)
        )
    except TimeoutError:
        return False
    if data is None:
        return True
    event = orjson.loads(data)
    if event.get("type") == "progress":
        await ctx.progress(event.get("progress"), event.get("total"), event.get("message"))
        return False
    return event.get("type") == "status"


async def _ask_client(task: Task, ctx) -> None:
    from mcptasks.lifecycle import update_task

    for key, question in task.input_requests.items():
        answer = await ctx.request(key, question["method"], question.get("params") or {})
        await run_db(update_task, task, {key: answer})


async def _cancel_quietly(served: Served, task_id: str) -> None:
    try:
        task = await run_db(_find, served, task_id)
        await run_db(
            lifecycle.cancel_task, task, message="Cancelled: the caller cancelled the call."
        )
    except McpError:
        pass


async def call_provided(served: Served, name: str, arguments: dict, ctx) -> dict:
    handle = arguments.get("handle") if isinstance(arguments, dict) else None
    if not isinstance(handle, str) or not handle:
        raise ToolError(f"{name} needs the handle a long call answered")
    task = await _row(served, handle)
    if name == STATUS:
        text = f"Call {handle}: {task.status}" + (
            f" ({task.status_message})" if task.status_message else ""
        )
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"handle": handle, "status": task.status},
        }
    if name == CANCEL:
        if not task.is_terminal:
            task = await run_db(lifecycle.cancel_task, task, message="Cancelled by the caller.")
        return {
            "content": [{"type": "text", "text": f"Call {handle}: {task.status}"}],
            "structuredContent": {"handle": handle, "status": task.status},
        }
    return await wait(served, handle, ctx, owns_task=False)


def _raise_if_cancelled(watcher) -> None:
    """Raise Cancelled when the client cancelled the call. The watcher only listens for that:
    its other endings (its wait ran out, Redis timed out under load) are no cancellation and
    must not fail the call."""
    if watcher is None or not watcher.done() or watcher.cancelled():
        return
    if isinstance(watcher.exception(), Cancelled):
        raise watcher.exception()
