"""Where a server's parts (tools, resources, resource templates, prompts) go, and how they move
and switch: the one rule the dashboard forms, the REST API, upstream sync and the import preview
all follow.

Positions are 0-based: the first part of a kind is at 0, a new one goes after the last
(`max + 1`, or 0 on an empty server). Ties are allowed (ordering falls back to the id) and a
move renumbers the whole list 0..n-1. Every write that picks a position holds the server row's
lock (`SELECT ... FOR UPDATE`) inside a transaction, so two concurrent appends never take the
same position, and an append never interleaves with a reorder.
"""

from collections.abc import Iterator

from django.db import transaction
from django.db.models import Max, Model

from .models import Server, Tool


def server_lock(*, server: Server) -> None:
    """Lock the server row until the caller's transaction ends (call inside `atomic`)."""
    Server.objects.select_for_update().filter(pk=server.pk).first()


def part_positions(*, server: Server, related: str) -> Iterator[int]:
    """The positions of parts appended now, in order (0-based). Call under `server_lock`."""
    last = getattr(server, related).aggregate(top=Max("position"))["top"]
    position = 0 if last is None else last + 1
    while True:
        yield position
        position += 1


def part_create(*, server: Server, related: str, row: Model, position: int | None = None) -> Model:
    """Save a new part: at `position` when the caller names one (the API's field), else last."""
    with transaction.atomic():
        server_lock(server=server)
        row.server = server
        row.position = (
            next(part_positions(server=server, related=related)) if position is None else position
        )
        row.save()
    return row


def part_move(*, server: Server, related: str, pk: int, direction: str) -> bool:
    """Swap a part with its neighbour ("up" or "down") and renumber the list 0..n-1, so ties
    never stall a move. False when there is no such part of this server."""
    with transaction.atomic():
        server_lock(server=server)
        rows = list(getattr(server, related).order_by("position", "id"))
        index = next((i for i, r in enumerate(rows) if r.pk == pk), None)
        if index is None:
            return False
        target = index - 1 if direction == "up" else index + 1
        if 0 <= target < len(rows):
            rows[index], rows[target] = rows[target], rows[index]
            for position, row in enumerate(rows):
                if row.position != position:
                    row.position = position
                    row.save(update_fields=["position"])
    return True


def tool_toggle(*, tool: Tool) -> Tool:
    """Switch a tool on or off (what clients list and may call)."""
    with transaction.atomic():
        tool.enabled = not tool.enabled
        tool.save(update_fields=["enabled"])
    return tool
