"""Importing a document into a server that may already hold an earlier import of it.

Each operation is matched to the server's `http` tool of the same name (the name comes from
the operationId, so it is stable across versions of a document), else to the `http` tool that
calls the same method and URL (a renamed operationId). A match is updated in place (its name,
position and whether it is switched on are the person's and stay); an operation with no match
is added as a disabled draft. So importing a document twice, or submitting an import form
twice, changes nothing the second time: the import is idempotent by content, and no
`listUsers_2` appears. `plan_import` says what an import would do (added, changed with the
fields that change, unchanged, removed) without writing; `apply_import` does it under the
server's lock, so two submits of one import are serialized and the second finds the first's
tools.

"Removed" are the server's `http` tools that call the document's base URL but match no
operation of a whole-document import: listed in the plan, deleted only when asked
(`remove_missing`), since a person may have added such a tool by hand.
"""

import re
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from servers import parts
from servers.kinds.http.kind import KIND as HTTP
from servers.models import TOOL_NAME_RE, Tool

from .preview import ImportedOperation, ImportFailed, ImportPreview, unique

ADDED, CHANGED, UNCHANGED, REMOVED = "added", "changed", "unchanged", "removed"
# Tool attribute -> its wire name: what an import writes, and so what it may change.
IMPORTED_FIELDS = {
    "title": "title",
    "description": "description",
    "input_schema": "inputSchema",
    "annotations": "annotations",
    "config": "config",
}


@dataclass
class Change:
    action: str  # added | changed | unchanged | removed
    name: str  # the tool's name, or the name an added tool will get
    source: str  # "GET /users/{id}" (empty for a removed tool)
    fields: list[str] = field(default_factory=list)  # wire names that change
    operation: ImportedOperation | None = None
    tool: Tool | None = None

    def to_dict(self) -> dict:
        data: dict[str, Any] = {"name": self.name, "source": self.source}
        if self.action == CHANGED:
            data["fields"] = self.fields
        if self.tool is not None:
            data["toolId"] = self.tool.pk
        return data


@dataclass
class ImportPlan:
    changes: list[Change]

    def of(self, action: str) -> list[Change]:
        return [change for change in self.changes if change.action == action]

    def to_dict(self) -> dict:
        return {
            action: [change.to_dict() for change in self.of(action)]
            for action in (ADDED, CHANGED, REMOVED, UNCHANGED)
        }

    def summary(self) -> str:
        return ", ".join(
            f"{len(self.of(action))} {action}" for action in (ADDED, CHANGED, REMOVED, UNCHANGED)
        )


def chosen_operations(
    preview: ImportPreview, selected: list[str] | None
) -> list[ImportedOperation]:
    """The operations `selected` names (tool names, operationIds or sources); all when None."""
    if selected is None:
        chosen = list(preview.operations)
    else:
        chosen, unknown = [], []
        for key in selected:
            op = preview.find(key)
            if op is None:
                unknown.append(key)
            elif op not in chosen:
                chosen.append(op)
        if unknown:
            raise ImportFailed(f"selected: no operation named {', '.join(map(repr, unknown))}")
    if not chosen:
        raise ImportFailed("selected: nothing to import")
    return chosen


def imported_values(op: ImportedOperation, name: str) -> dict[str, Any]:
    """The Tool attributes an operation sets (IMPORTED_FIELDS)."""
    return {
        "title": op.title[:200],
        "description": op.description or op.title or name,
        "input_schema": op.input_schema,
        "annotations": op.annotations,
        "config": op.config,
    }


def _endpoint(config: Any) -> tuple[str, str] | None:
    if not isinstance(config, dict) or not isinstance(config.get("url"), str):
        return None
    return str(config.get("method") or "GET").upper(), config["url"]


def plan_import(server, preview: ImportPreview, selected: list[str] | None = None) -> ImportPlan:
    """What importing `selected` (all when None) of `preview` into `server` would do."""
    chosen = chosen_operations(preview, selected)
    existing = list(server.tools.order_by("position", "id"))
    http_tools = [tool for tool in existing if tool.kind == HTTP.name]
    by_name = {tool.name: tool for tool in http_tools}
    by_endpoint: dict[tuple[str, str], Tool] = {}
    for tool in http_tools:
        key = _endpoint(tool.config)
        if key is not None:
            by_endpoint.setdefault(key, tool)
    taken = {tool.name for tool in existing}
    claimed: set[int] = set()
    changes = []
    for op in chosen:
        tool = by_name.get(op.name)
        if tool is None or tool.pk in claimed:
            tool = by_endpoint.get(_endpoint(op.config) or ("", ""))
        if tool is None or tool.pk in claimed:
            changes.append(Change(ADDED, unique(op.name, taken), op.source, operation=op))
            continue
        claimed.add(tool.pk)
        wanted = imported_values(op, tool.name)
        fields = [
            wire for attr, wire in IMPORTED_FIELDS.items() if getattr(tool, attr) != wanted[attr]
        ]
        action = CHANGED if fields else UNCHANGED
        changes.append(Change(action, tool.name, op.source, fields, operation=op, tool=tool))
    if selected is None and preview.base_url:
        base = preview.base_url.rstrip("/") + "/"
        for tool in http_tools:
            key = _endpoint(tool.config)
            if tool.pk not in claimed and key is not None and key[1].startswith(base):
                changes.append(Change(REMOVED, tool.name, "", tool=tool))
    return ImportPlan(changes)


def apply_import(
    server,
    preview: ImportPreview,
    selected: list[str] | None = None,
    *,
    remove_missing: bool = False,
) -> tuple[ImportPlan, list[Tool]]:
    """Do what plan_import says (removals only with `remove_missing`); returns the plan and
    the tools of the chosen operations, in their order, whether added, changed or unchanged."""
    with transaction.atomic():
        # Lock the server row: two imports into one server (a double submit) run one after
        # the other, and the second plans against the first's tools.
        parts.server_lock(server=server)
        plan = plan_import(server, preview, selected)
        positions = parts.part_positions(server=server, related="tools")
        tools = []
        for change in plan.changes:
            op = change.operation
            if change.action == ADDED and op is not None:
                if not re.match(TOOL_NAME_RE, change.name):  # parsers sanitise; the backstop
                    raise ImportFailed(f"{op.source}: tool name {change.name!r} is not valid")
                values = imported_values(op, change.name)
                tools.append(
                    Tool.objects.create(
                        server=server,
                        name=change.name,
                        kind=HTTP.name,
                        enabled=False,
                        position=next(positions),
                        **values,
                    )
                )
            elif change.action == CHANGED and op is not None and change.tool is not None:
                for attr, value in imported_values(op, change.tool.name).items():
                    setattr(change.tool, attr, value)
                change.tool.save(update_fields=list(IMPORTED_FIELDS))
                tools.append(change.tool)
            elif change.action == UNCHANGED and change.tool is not None:
                tools.append(change.tool)
            elif change.action == REMOVED and remove_missing and change.tool is not None:
                change.tool.delete()
    return plan, tools


def commit_import(server, preview: ImportPreview, selected: list[str] | None = None) -> list[Tool]:
    """Import the selected operations (all when None): new ones as disabled draft `http`
    tools, ones the server already has updated in place. Returns their tools."""
    return apply_import(server, preview, selected)[1]
