"""`kind: workflow`: a list of steps (log, progress, sleep, elicit, sample, roots, fail, return,
notify, all, task, and http from http.py), every step type in the one table STEP_TYPES.

Runs are deterministic given the same client answers: the stateless era re-runs a workflow from
the top with the answers keyed by each step's `into` (or `step<index>`).
"""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp_protocol.context import LOG_LEVELS
from mcp_protocol.errors import InputRequired, McpError, ToolError

from ..templating import TemplateCompileError, compile_value, render_text
from . import http
from .static import ResultTemplate, compile_result, validate_result

MAX_SLEEP_SECONDS = 600


@dataclass(frozen=True, slots=True)
class Step:
    kind: str
    position: str  # "3" for the fourth step; "3_1" for the second step inside it
    key: str  # where an answer is stored in the variables and keyed in the client's answers
    render: Callable[[dict], Any]  # renders the step's body over the variables
    extra: Any = None  # what the step type compiled for itself (see StepType)


Validate = Callable[[dict, str], list[str]]
Run = Callable[[Step, dict, Any], Awaitable[dict | None]]


@dataclass(frozen=True, slots=True)
class StepType:
    """One type of step.

    `validate(body, path)` lists problems naming `path`; `compile_extra(body, tool_def)`, when
    given, precompiles what `run` finds in `step.extra` (tool_def is the whole tool, with the
    snapshot's `_server` entry); `run(step, variables, ctx)` may store into
    `variables[step.key]` and returns a CallToolResult to stop the workflow, else None.
    """

    validate: Validate
    run: Run
    compile_extra: Callable[[dict, dict], Any] | None = None


def _required(body: dict, path: str, *fields: str) -> list[str]:
    return [f"{path}.{field}: required" for field in fields if field not in body]


def _number_like(value) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)) or isinstance(
        value, str
    )


def _as_number(value, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ToolError(f"{what} must be a number, got {value!r}") from None


def _into_errors(body: dict, path: str) -> list[str]:
    into = body.get("into")
    if into is not None and not (isinstance(into, str) and into.isidentifier()):
        return [f"{path}.into: must be a variable name"]
    return []


# -- log ------------------------------------------------------------------------------------------


def _validate_log(body, path):
    errors = _required(body, path, "message")
    level = body.get("level", "info")
    if level not in LOG_LEVELS:
        errors.append(f"{path}.level: must be one of {', '.join(LOG_LEVELS)}")
    return errors


async def _run_log(step, variables, ctx):
    body = step.render(variables)
    await ctx.log(body.get("level", "info"), body["message"], body.get("logger"))


# -- progress -------------------------------------------------------------------------------------


def _validate_progress(body, path):
    errors = _required(body, path, "progress")
    for field in ("progress", "total"):
        if field in body and not _number_like(body[field]):
            errors.append(f"{path}.{field}: must be a number")
    return errors


async def _run_progress(step, variables, ctx):
    body = step.render(variables)
    total = body.get("total")
    await ctx.progress(
        _as_number(body["progress"], "progress"),
        None if total in (None, "") else _as_number(total, "total"),
        body.get("message") or None,
    )


# -- sleep ----------------------------------------------------------------------------------------


def _validate_sleep(body, path):
    errors = _required(body, path, "ms")
    ms = body.get("ms")
    if ms is not None and (not _number_like(ms) or (not isinstance(ms, str) and ms < 0)):
        errors.append(f"{path}.ms: must be a number of milliseconds >= 0")
    return errors


async def _run_sleep(step, variables, ctx):
    seconds = _as_number(step.render(variables)["ms"], "sleep.ms") / 1000
    await ctx.sleep(min(max(seconds, 0.0), MAX_SLEEP_SECONDS))


# -- reconnect: let the client's connection go while the work goes on -----------------------------


def _validate_reconnect(body, path):
    retry = body.get("retryMs", 1000)
    if isinstance(retry, bool) or not isinstance(retry, int) or not 0 <= retry <= 60_000:
        return [f"{path}.retryMs: must be a whole number of milliseconds from 0 to 60000"]
    return []


async def _run_reconnect(step, variables, ctx):
    # Only a session-era client of 2025-11-25 or later can resume a stream; elsewhere the step
    # is a no-op and the call simply goes on.
    disconnect = getattr(ctx, "disconnect", None)
    if disconnect is not None:
        await disconnect(int(step.render(variables).get("retryMs", 1000)))


# -- elicit, sample, roots: requests to the client --------------------------------------------------


def _validate_elicit(body, path):
    errors = _required(body, path, "message", "requestedSchema") + _into_errors(body, path)
    if "requestedSchema" in body and not isinstance(body["requestedSchema"], dict):
        errors.append(f"{path}.requestedSchema: must be a mapping")
    return errors


def _request_params(body: dict) -> dict:
    return {key: value for key, value in body.items() if key != "into"}


async def _run_elicit(step, variables, ctx):
    body = _request_params(step.render(variables))
    variables[step.key] = await ctx.request(step.key, "elicitation/create", body)


def _validate_sample(body, path):
    errors = _required(body, path, "messages", "maxTokens") + _into_errors(body, path)
    if "messages" in body and not isinstance(body["messages"], list):
        errors.append(f"{path}.messages: must be a list")
    if "maxTokens" in body and not _number_like(body["maxTokens"]):
        errors.append(f"{path}.maxTokens: must be a number")
    return errors


async def _run_sample(step, variables, ctx):
    body = _request_params(step.render(variables))
    if isinstance(body.get("maxTokens"), str):
        body["maxTokens"] = int(_as_number(body["maxTokens"], "maxTokens"))
    variables[step.key] = await ctx.request(step.key, "sampling/createMessage", body)


def _validate_roots(body, path):
    return _into_errors(body, path)


async def _run_roots(step, variables, ctx):
    variables[step.key] = await ctx.request(step.key, "roots/list", {})


# -- fail, return ---------------------------------------------------------------------------------


def _validate_fail(body, path):
    errors = _required(body, path, "message")
    code = body.get("code")
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        errors.append(f"{path}.code: must be an integer JSON-RPC error code")
    return errors


async def _run_fail(step, variables, ctx):
    body = step.render(variables)
    message = render_text(body["message"])
    if body.get("code") is not None:
        raise McpError(body["code"], message, body.get("data"))
    raise ToolError(message, body.get("structuredContent"))


def _validate_return(body, path):
    return validate_result(body, path)


async def _run_return(step, variables, ctx):
    result_template: ResultTemplate = step.extra
    return result_template.build(variables)


# -- notify: tell connected clients that something outside the definition changed -----------------

NOTIFY_LISTS = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}


def _validate_notify(body, path):
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


def _compile_notify(body, tool_def):
    return (tool_def.get("_server") or {}).get("id")


async def _run_notify(step, variables, ctx):
    """A tool whose lists or resources depend on something getmcp cannot see (an upstream
    server, an external system) tells every connected client to fetch them again."""
    from .. import changes

    server_id = step.extra
    if server_id is None:
        return
    body = step.render(variables)
    methods = [NOTIFY_LISTS[item] for item in body.get("lists") or ()]
    if methods:
        await asyncio.to_thread(changes.notify_sessions, server_id, methods)
    for uri in body.get("resources") or ():
        await asyncio.to_thread(changes.notify_resource_updated, server_id, render_text(uri))


# -- all: several client requests asked together ----------------------------------------------------

# In the stateless era each unanswered request ends a round trip; `all` lets a workflow ask for
# several answers in one round instead of one round per request.
ASKING_STEPS = ("elicit", "sample", "roots")


def _validate_all(body, path):
    items = body.get("steps")
    if not isinstance(items, list) or not items:
        return [f"{path}.steps: required, a list of elicit, sample or roots steps"]
    errors = []
    for index, item in enumerate(items):
        where = f"{path}.steps[{index}]"
        if not isinstance(item, dict) or len(item) != 1:
            errors.append(f"{where}: must be a mapping with exactly one step name")
            continue
        ((name, inner),) = item.items()
        if name not in ASKING_STEPS:
            errors.append(f"{where}: must be one of {', '.join(ASKING_STEPS)}")
        elif not isinstance(inner or {}, dict):
            errors.append(f"{where}.{name}: must be a mapping")
        else:
            errors.extend(STEP_TYPES[name].validate(inner or {}, f"{where}.{name}"))
    return errors


def _compile_all(body, tool_def, position):
    return tuple(
        _compile_step(name, inner or {}, tool_def, f"{position}_{index}")
        for index, item in enumerate(body["steps"])
        for name, inner in item.items()
    )


async def _run_all(step, variables, ctx):
    missing: dict = {}
    state = None
    for inner in step.extra:
        try:
            await STEP_TYPES[inner.kind].run(inner, variables, ctx)
        except InputRequired as exc:
            missing.update(exc.input_requests)
            state = state if state is not None else exc.request_state
    if missing:
        raise InputRequired(missing, state)


# -- task: where a call may leave the request and go on as a task ------------------------------------
# The steps before it run inside the tools/call request (a stateless client answers their
# questions through MRTR, as the tasks extension advises for input a task needs up front); the
# call becomes a task when it reaches this step, and the task's run finds those answers. Outside
# a task-augmented stateless call the step does nothing, so the same workflow also runs inline.


class StartTask(Exception):
    """Raised by the `task` step when the endpoint asked to be told (see servers.endpoint.tasks);
    `answers` are the client's answers the steps before it used."""

    def __init__(self, answers: dict):
        super().__init__("start task")
        self.answers = answers


def _validate_task(body, path):
    if body:
        return [f"{path}: takes no fields (write `- task: {{}}`)"]
    return []


async def _run_task(step, variables, ctx):
    start = getattr(ctx, "start_task", None)
    if start is not None:
        start()


# -- every step type --------------------------------------------------------------------------------

STEP_TYPES: dict[str, StepType] = {
    "log": StepType(_validate_log, _run_log),
    "progress": StepType(_validate_progress, _run_progress),
    "sleep": StepType(_validate_sleep, _run_sleep),
    "reconnect": StepType(_validate_reconnect, _run_reconnect),
    "elicit": StepType(_validate_elicit, _run_elicit),
    "sample": StepType(_validate_sample, _run_sample),
    "roots": StepType(_validate_roots, _run_roots),
    "fail": StepType(_validate_fail, _run_fail),
    "notify": StepType(_validate_notify, _run_notify, _compile_notify),
    "return": StepType(_validate_return, _run_return, lambda body, tool_def: compile_result(body)),
    # `all` compiles its inner steps itself (see _compile_step): their keys need its position.
    "all": StepType(_validate_all, _run_all),
    "http": StepType(http.validate_step, http.run_step, http.compile_step),
    "task": StepType(_validate_task, _run_task),
}


# -- the kind -------------------------------------------------------------------------------------


def _intos(name: str, body: dict, path: str):
    """(path, variable) of every `into` of a step, the inner steps of `all` included."""
    if "into" in body:
        yield path, body["into"]
    if name == "all" and isinstance(body.get("steps"), list):
        for index, item in enumerate(body["steps"]):
            if isinstance(item, dict) and len(item) == 1:
                ((inner_name, inner),) = item.items()
                if isinstance(inner, dict) and "into" in inner:
                    yield f"{path}.steps[{index}].{inner_name}", inner["into"]


def validate_config(config: dict) -> list[str]:
    if not isinstance(config, dict):
        return ["config: must be a mapping"]
    steps = config.get("steps")
    if not isinstance(steps, list):
        return ["config.steps: required, a list of steps"]
    errors = []
    keys: set[str] = set()
    for index, item in enumerate(steps):
        path = f"config.steps[{index}]"
        if not isinstance(item, dict) or len(item) != 1:
            errors.append(f"{path}: must be a mapping with exactly one step name")
            continue
        ((name, body),) = item.items()
        if name not in STEP_TYPES:
            errors.append(f"{path}: unknown step {name!r} (known: {', '.join(STEP_TYPES)})")
            continue
        path = f"{path}.{name}"
        if body is None:
            body = {}
        if not isinstance(body, dict):
            errors.append(f"{path}: must be a mapping")
            continue
        errors.extend(STEP_TYPES[name].validate(body, path))
        for where, into in _intos(name, body, path):
            if into in keys:
                errors.append(f"{where}.into: {into!r} is already used by an earlier step")
            keys.add(into)
        try:
            compile_value(body)
        except TemplateCompileError as exc:
            errors.append(f"{path}: {exc}")
    unknown = set(config) - {"steps"}
    errors.extend(f"config.{key}: unknown field" for key in sorted(unknown))
    return errors


def _compile_step(name: str, body: dict, tool_def: dict, position: str) -> Step:
    step_type = STEP_TYPES[name]
    if name == "all":
        extra = _compile_all(body, tool_def, position)
    else:
        extra = step_type.compile_extra(body, tool_def) if step_type.compile_extra else None
    return Step(
        kind=name,
        position=position,
        key=body.get("into") or f"step{position}",
        render=compile_value(body),
        extra=extra,
    )


def compile(tool_def: dict) -> tuple[Step, ...]:
    return tuple(
        _compile_step(name, body or {}, tool_def, str(index))
        for index, item in enumerate((tool_def.get("config") or {}).get("steps", []))
        for name, body in item.items()
    )


async def run_steps(compiled: tuple[Step, ...], variables: dict, ctx) -> dict | None:
    """Run steps over `variables` (answers land there); the result of a `return` step, if any."""
    for step in compiled:
        result = await STEP_TYPES[step.kind].run(step, variables, ctx)
        if result is not None:
            return result
    return None


async def call(compiled: tuple[Step, ...], arguments: dict, ctx) -> dict:
    result = await run_steps(compiled, dict(arguments), ctx)
    return result if result is not None else {"content": [{"type": "text", "text": ""}]}


# -- steps outside tools: a prompt asks the client before its messages are rendered ---------------

PROMPT_STEPS = ("log", "progress", "sleep", "elicit", "sample", "roots", "fail", "all")


def validate_prompt_steps(steps, path: str) -> list[str]:
    """Problems of a prompt's `steps`, naming `path`; a prompt answers with its messages, so
    `return` has no place there."""
    if not isinstance(steps, list):
        return [f"{path}: must be a list of steps"]
    errors = [
        message.replace("config.steps", path, 1) for message in validate_config({"steps": steps})
    ]
    for index, item in enumerate(steps):
        if isinstance(item, dict) and len(item) == 1:
            (name,) = item
            if name in STEP_TYPES and name not in PROMPT_STEPS:
                errors.append(f"{path}[{index}]: a prompt cannot use the {name!r} step")
    return errors


def compile_steps(steps: list, owner: dict) -> tuple[Step, ...]:
    return compile({**owner, "config": {"steps": steps}})
