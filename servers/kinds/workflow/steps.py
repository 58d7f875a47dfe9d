"""The built-in step types that stand alone: log, progress, sleep, reconnect, elicit, sample,
roots, fail, return, notify, task."""

import asyncio
from typing import Any, NoReturn

from mcp_protocol.context import LOG_LEVELS, RequestContext
from mcp_protocol.errors import McpError, ToolError

from ...templating import render_text
from ..static import ResultTemplate, compile_result, validate_result
from .base import (
    MAX_SLEEP_SECONDS,
    Step,
    StepType,
    _as_number,
    _into_errors,
    _number_like,
    _required,
)

# -- log ------------------------------------------------------------------------------------------


def _validate_log(body: Any, path: str) -> list[str]:
    errors = _required(body, path, "message")
    level = body.get("level", "info")
    if level not in LOG_LEVELS:
        errors.append(f"{path}.level: must be one of {', '.join(LOG_LEVELS)}")
    return errors


async def _run_log(step: Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    body = step.render(variables)
    await ctx.log(body.get("level", "info"), body["message"], body.get("logger"))


# -- progress -------------------------------------------------------------------------------------


def _validate_progress(body: Any, path: str) -> list[str]:
    errors = _required(body, path, "progress")
    for field in ("progress", "total"):
        if field in body and not _number_like(body[field]):
            errors.append(f"{path}.{field}: must be a number")
    return errors


async def _run_progress(step: Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    body = step.render(variables)
    total = body.get("total")
    await ctx.progress(
        _as_number(body["progress"], "progress"),
        None if total in (None, "") else _as_number(total, "total"),
        body.get("message") or None,
    )


# -- sleep ----------------------------------------------------------------------------------------


def _validate_sleep(body: Any, path: str) -> list[str]:
    errors = _required(body, path, "ms")
    ms = body.get("ms")
    if ms is not None and (not _number_like(ms) or (not isinstance(ms, str) and ms < 0)):
        errors.append(f"{path}.ms: must be a number of milliseconds >= 0")
    return errors


async def _run_sleep(step: Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    seconds = _as_number(step.render(variables)["ms"], "sleep.ms") / 1000
    await ctx.sleep(min(max(seconds, 0.0), MAX_SLEEP_SECONDS))


# -- reconnect: let the client's connection go while the work goes on -----------------------------


def _validate_reconnect(body: Any, path: str) -> list[str]:
    retry = body.get("retryMs", 1000)
    if isinstance(retry, bool) or not isinstance(retry, int) or not 0 <= retry <= 60_000:
        return [f"{path}.retryMs: must be a whole number of milliseconds from 0 to 60000"]
    return []


async def _run_reconnect(step: Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    # Only a session-era client of 2025-11-25 or later can resume a stream; elsewhere the step
    # is a no-op and the call simply goes on.
    await ctx.disconnect(int(step.render(variables).get("retryMs", 1000)))


# -- elicit, sample, roots: requests to the client --------------------------------------------------


def _validate_elicit(body: Any, path: str) -> list[str]:
    errors = _required(body, path, "message", "requestedSchema") + _into_errors(body, path)
    if "requestedSchema" in body and not isinstance(body["requestedSchema"], dict):
        errors.append(f"{path}.requestedSchema: must be a mapping")
    return errors


def _request_params(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key != "into"}


async def _run_elicit(step: Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    body = _request_params(step.render(variables))
    variables[step.key] = await ctx.request(step.key, "elicitation/create", body)


def _validate_sample(body: Any, path: str) -> list[str]:
    errors = _required(body, path, "messages", "maxTokens") + _into_errors(body, path)
    if "messages" in body and not isinstance(body["messages"], list):
        errors.append(f"{path}.messages: must be a list")
    if "maxTokens" in body and not _number_like(body["maxTokens"]):
        errors.append(f"{path}.maxTokens: must be a number")
    return errors


async def _run_sample(step: Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    body = _request_params(step.render(variables))
    if isinstance(body.get("maxTokens"), str):
        body["maxTokens"] = int(_as_number(body["maxTokens"], "maxTokens"))
    variables[step.key] = await ctx.request(step.key, "sampling/createMessage", body)


def _validate_roots(body: Any, path: str) -> list[str]:
    return _into_errors(body, path)


async def _run_roots(step: Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    variables[step.key] = await ctx.request(step.key, "roots/list", {})


# -- fail, return ---------------------------------------------------------------------------------


def _validate_fail(body: Any, path: str) -> list[str]:
    errors = _required(body, path, "message")
    code = body.get("code")
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        errors.append(f"{path}.code: must be an integer JSON-RPC error code")
    return errors


async def _run_fail(step: Step, variables: dict[str, Any], ctx: RequestContext) -> NoReturn:
    body = step.render(variables)
    message = render_text(body["message"])
    if body.get("code") is not None:
        raise McpError(body["code"], message, body.get("data"))
    raise ToolError(message, body.get("structuredContent"))


def _validate_return(body: Any, path: str) -> list[str]:
    return validate_result(body, path)


async def _run_return(step: Step, variables: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    result_template: ResultTemplate = step.extra
    return result_template.build(variables)


# -- notify: tell connected clients that something outside the definition changed -----------------

NOTIFY_LISTS = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}


def _validate_notify(body: Any, path: str) -> list[str]:
    lists, resources = body.get("lists", []), body.get("resources", [])
    errors = []
    if not isinstance(lists, list) or any(item not in NOTIFY_LISTS for item in lists):
        errors.append(f"{path}.lists: must be a list of {', '.join(NOTIFY_LISTS)}")
    if not isinstance(resources, list) or not all(isinstance(uri, str) for uri in resources):
        errors.append(f"{path}.resources: must be a list of resource URIs")
    if not errors and not lists and not resources:
        errors.append(f"{path}: name at least one of lists or resources")
    errors.extend(
        f"{path}.{key}: unknown field" for key in sorted(set(body) - {"lists", "resources"})
    )
    return errors


def _compile_notify(body: Any, tool_def: dict[str, Any]) -> Any:
    return (tool_def.get("_server") or {}).get("id")


async def _run_notify(step: Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    """A tool whose lists or resources depend on something getmcp cannot see (an upstream
    server, an external system) tells every connected client to fetch them again."""
    from ... import changes

    server_id = step.extra
    if server_id is None:
        return
    body = step.render(variables)
    methods = [NOTIFY_LISTS[item] for item in body.get("lists") or ()]
    if methods:
        await asyncio.to_thread(changes.notify_sessions, server_id, methods)
    for uri in body.get("resources") or ():
        await asyncio.to_thread(changes.notify_resource_updated, server_id, render_text(uri))


# -- task: where a call may leave the request and go on as a task ------------------------------------
# The steps before it run inside the tools/call request (a stateless client answers their
# questions through MRTR, as the tasks extension advises for input a task needs up front); the
# call becomes a task when it reaches this step, and the task's run finds those answers. Outside
# a task-augmented stateless call the step does nothing, so the same workflow also runs inline.


class StartTask(Exception):
    """Raised by the `task` step when the endpoint asked to be told (see gateway.endpoint.tasks);
    `answers` are the client's answers the steps before it used."""

    def __init__(self, answers: dict[str, Any]) -> None:
        super().__init__("start task")
        self.answers = answers


def _validate_task(body: Any, path: str) -> list[str]:
    if body:
        return [f"{path}: takes no fields (write `- task: {{}}`)"]
    return []


async def _run_task(step: Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    if ctx.start_task is not None:
        ctx.start_task()


# The step types of this module, as the table in __init__.py lists them.
LOG = StepType(_validate_log, _run_log)
PROGRESS = StepType(_validate_progress, _run_progress)
SLEEP = StepType(_validate_sleep, _run_sleep)
RECONNECT = StepType(_validate_reconnect, _run_reconnect)
ELICIT = StepType(_validate_elicit, _run_elicit)
SAMPLE = StepType(_validate_sample, _run_sample)
ROOTS = StepType(_validate_roots, _run_roots)
FAIL = StepType(_validate_fail, _run_fail)
NOTIFY = StepType(_validate_notify, _run_notify, _compile_notify)
RETURN = StepType(_validate_return, _run_return, lambda body, tool_def: compile_result(body))
TASK = StepType(_validate_task, _run_task)
