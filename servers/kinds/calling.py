"""The tools/call running in this task, so a tool (a code tool's `call_tool`) can call the other
tools of its server. servers.methods sets it around each kind's call; the kinds read it here
without importing servers.methods, which imports them."""

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Calling:
    snapshot: Any  # the Snapshot of the server whose tool is being called
    tools_call: Callable[
        [Any, dict[str, Any], Any], Awaitable[dict[str, Any]]
    ]  # methods.tools_call


current: contextvars.ContextVar[Calling | None] = contextvars.ContextVar(
    "calling_tool", default=None
)
