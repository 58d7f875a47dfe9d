"""X"""

from collections.abc import Iterator
from typing import Any

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import InputRequired

from ...templating import TemplateCompileError, compile_value
from .. import http
from . import steps
from .base import Step, StepType
from .steps import StartTask

# -- all: several client requests asked together ----------------------------------------------------

# In the stateless era each unanswered request ends a round trip; `all` lets a workflow ask for
# several answers in one round instead of one round per request.
ASKING_STEPS = ("elicit", "sample", "roots")


def _validate_all(body: Any, path: str) -> list[str]:
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


def _compile_all(body: Any, tool_def: dict[str, Any], position: str) -> tuple[Step, ...]:
    return tuple(
        _compile_step(name, inner or {}, tool_def, f"{position}_{index}")
        for index, item in enumerate(body["steps"])
        for name, inner in item.items()
    )


async def _run_all(step: Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    missing: dict[str, Any] = {}
    state = None
    for inner in step.extra:
        try:
            await STEP_TYPES[inner.kind].run(inner, variables, ctx)
        except InputRequired as exc:
            missing.update(exc.input_requests)
            state = state if state is not None else exc.request_state
    if missing:
        raise InputRequired(missing, state)


# -- every step type --------------------------------------------------------------------------------

STEP_TYPES: dict[str, StepType] = {
    "log": steps.LOG,
    "progress": steps.PROGRESS,
    "sleep": steps.SLEEP,
    "reconnect": steps.RECONNECT,
    "elicit": steps.ELICIT,
    "sample": steps.SAMPLE,
    "roots": steps.ROOTS,
    "fail": steps.FAIL,
    "notify": steps.NOTIFY,
    "return": steps.RETURN,
    # `all` compiles its inner steps itself (see _compile_step): their keys need its position.
    "all": StepType(_validate_all, _run_all),
    "http": StepType(http.validate_step, http.run_step, http.compile_step),
    "task": steps.TASK,
}


# -- the kind -------------------------------------------------------------------------------------


def _intos(name: str, body: dict[str, Any], path: str) -> Iterator[tuple[str, Any]]:
    """(path, variable) of every `into` of a step, the inner steps of `all` included."""
    if "into" in body:
        yield path, body["into"]
    if name == "all" and isinstance(body.get("steps"), list):
        for index, item in enumerate(body["steps"]):
            if isinstance(item, dict) and len(item) == 1:
                ((inner_name, inner),) = item.items()
                if isinstance(inner, dict) and "into" in inner:
                    yield f"{path}.steps[{index}].{inner_name}", inner["into"]


def _checked_step(path: str, item: Any) -> tuple[str, str, dict[str, Any]] | str:
    """(its path, name and body) of a step of a known type, or what is wrong with it."""
    if not isinstance(item, dict) or len(item) != 1:
        return f"{path}: must be a mapping with exactly one step name"
    ((name, body),) = item.items()
    if name not in STEP_TYPES:
        return f"{path}: unknown step {name!r} (known: {', '.join(STEP_TYPES)})"
    path = f"{path}.{name}"
    if body is None:
        body = {}
    if not isinstance(body, dict):
        return f"{path}: must be a mapping"
    return path, name, body


def validate_config(config: dict[str, Any]) -> list[str]:
    if not isinstance(config, dict):
        return ["config: must be a mapping"]
    steps = config.get("steps")
    if not isinstance(steps, list):
        return ["config.steps: required, a list of steps"]
    errors = []
    keys: set[str] = set()
    for index, item in enumerate(steps):
        checked = _checked_step(f"config.steps[{index}]", item)
        if isinstance(checked, str):
            errors.append(checked)
            continue
        path, name, body = checked
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


def _compile_step(name: str, body: dict[str, Any], tool_def: dict[str, Any], position: str) -> Step:
    step_type = STEP_TYPES[name]
    extra: Any
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


def compile(tool_def: dict[str, Any]) -> tuple[Step, ...]:
    return tuple(
        _compile_step(name, body or {}, tool_def, str(index))
        for index, item in enumerate((tool_def.get("config") or {}).get("steps", []))
        for name, body in item.items()
    )


async def run_steps(
    compiled: tuple[Step, ...], variables: dict[str, Any], ctx: RequestContext
) -> dict[str, Any] | None:
    """Run steps over `variables` (answers land there); the result of a `return` step, if any."""
    for step in compiled:
        result = await STEP_TYPES[step.kind].run(step, variables, ctx)
        if result is not None:
            return result
    return None


async def call(
    compiled: tuple[Step, ...], arguments: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    result = await run_steps(compiled, dict(arguments), ctx)
    return result if result is not None else {"content": [{"type": "text", "text": ""}]}


# -- steps outside tools: a prompt asks the client before its messages are rendered ---------------

PROMPT_STEPS = ("log", "progress", "sleep", "elicit", "sample", "roots", "fail", "all")


def validate_prompt_steps(steps: Any, path: str) -> list[str]:
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


def compile_steps(steps: list[Any], owner: dict[str, Any]) -> tuple[Step, ...]:
    return compile({**owner, "config": {"steps": steps}})


__all__ = [
    "PROMPT_STEPS",
    "STEP_TYPES",
    "StartTask",
    "Step",
    "StepType",
    "call",
    "compile",
    "compile_steps",
    "run_steps",
    "validate_config",
    "validate_prompt_steps",
]
