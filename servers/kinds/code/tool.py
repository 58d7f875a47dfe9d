"""The compiled code tool: what `compile` makes of a tool definition and every language runs."""

from dataclasses import dataclass
from typing import Any

from .limits import Limits


@dataclass(frozen=True, slots=True)
class CodeTool:
    name: str
    language: str
    source: str  # the module followed by the driver that calls main
    entry: object
    user_lines: int  # lines of the tool's own source; the driver follows them
    limits: Limits
    secret_names: frozenset[str]
    organization_id: int | None
    server_id: int | None
    has_output_schema: bool
    # The paying account behind the organization: sandbox shares count by it (shares.py).
    owner_id: int | None = None
    # The caller's connected accounts the code reads as connections["<provider>"]
    # (connections.requirement.Requirement); empty for a tool that declares none.
    connections: tuple[Any, ...] = ()
