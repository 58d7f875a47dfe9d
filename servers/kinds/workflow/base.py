"""What every workflow step type is made of: the compiled Step, the StepType, shared checks."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp_protocol.errors import ToolError

MAX_SLEEP_SECONDS = 600


@dataclass(frozen=True, slots=True)
class Step:
    kind: str
    position: str  # "3" for the fourth step; "3_1" for the second step inside it
    key: str  # where an answer is stored in the variables and keyed in the client's answers
    render: Callable[[dict[str, Any]], Any]  # renders the step's body over the variables
    extra: Any = None  # what the step type compiled for itself (see StepType)


Validate = Callable[[dict[str, Any], str], list[str]]
Run = Callable[[Step, dict[str, Any], Any], Awaitable[dict[str, Any] | None]]


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
    compile_extra: Callable[[dict[str, Any], dict[str, Any]], Any] | None = None


def _required(body: dict[str, Any], path: str, *fields: str) -> list[str]:
    return [f"{path}.{field}: required" for field in fields if field not in body]


def _number_like(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)) or isinstance(
        value, str
    )


def _as_number(value: Any, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ToolError(f"{what} must be a number, got {value!r}") from None


def _into_errors(body: dict[str, Any], path: str) -> list[str]:
    into = body.get("into")
    if into is not None and not (isinstance(into, str) and into.isidentifier()):
        return [f"{path}.into: must be a variable name"]
    return []
