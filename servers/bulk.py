"""Big servers: finding a server's tools by text, state and kind, and enabling, disabling or
deleting many at once. The dashboard's server page and the REST API's bulk action both use
these, so a filter means the same thing on both surfaces.

Each row is saved (or deleted) on its own, inside one transaction under the server's lock, so
every tool still gets its audit row and its change record (servers.changes): a bulk change is
exactly the sum of the single changes, and all of it or none of it happens. Open sessions hear
of it once (one list_changed after the commit), not once per tool.
"""

from dataclasses import dataclass
from enum import StrEnum

from django.db import transaction
from django.db.models import Q, QuerySet

from .changes import announced_once
from .models import Server, Tool
from .parts import server_lock


class BulkAction(StrEnum):
    ENABLE = "enable"
    DISABLE = "disable"
    DELETE = "delete"


class ToolState(StrEnum):
    ANY = ""
    ENABLED = "enabled"
    DISABLED = "disabled"


@dataclass(frozen=True)
class ToolFilter:
    """What a person typed and picked; empty fields match everything."""

    text: str = ""  # in the name, title or description, case-insensitive
    state: ToolState = ToolState.ANY
    kind: str = ""

    @property
    def active(self) -> bool:
        return bool(self.text or self.state or self.kind)


def tools_matching(*, server: Server, match: ToolFilter) -> QuerySet[Tool]:
    tools = server.tools.all()
    text = match.text.strip()
    if text:
        tools = tools.filter(
            Q(name__icontains=text) | Q(title__icontains=text) | Q(description__icontains=text)
        )
    if match.state == ToolState.ENABLED:
        tools = tools.filter(enabled=True)
    elif match.state == ToolState.DISABLED:
        tools = tools.filter(enabled=False)
    if match.kind:
        tools = tools.filter(kind=match.kind)
    return tools.order_by("position", "id")


def tool_kinds(*, server: Server) -> list[str]:
    """The kinds this server's tools have, for the filter's choices."""
    return sorted(set(server.tools.values_list("kind", flat=True)))


def apply_bulk(*, server: Server, tools: QuerySet[Tool], action: BulkAction) -> list[str]:
    """Apply `action` to `tools` (rows of `server`); the names of the tools it changed (a tool
    already in the asked state is left alone and not named)."""
    changed: list[str] = []
    with transaction.atomic(), announced_once():
        server_lock(server=server)
        for tool in tools.filter(server=server).select_for_update().order_by("position", "id"):
            if action == BulkAction.DELETE:
                tool.delete()
            else:
                wanted = action == BulkAction.ENABLE
                if tool.enabled == wanted:
                    continue
                tool.enabled = wanted
                tool.save(update_fields=["enabled"])
            changed.append(tool.name)
    return changed
