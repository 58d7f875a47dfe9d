"""servers.parts: one position convention (0-based, appended after the last) under the server's
lock, used by the dashboard, the API, upstream sync and the import preview alike."""

import threading

import pytest
from django.db import connection

from servers import parts
from servers.models import Server, Tool


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="parts-demo", name="parts")


def tool(name: str) -> Tool:
    return Tool(name=name, description=name, input_schema={"type": "object"})


def test_the_first_part_is_at_zero_and_the_next_after_the_last(server):
    first = parts.part_create(server=server, related="tools", row=tool("a"))
    second = parts.part_create(server=server, related="tools", row=tool("b"))
    assert (first.position, second.position) == (0, 1)


def test_a_named_position_is_kept(server):
    assert (
        parts.part_create(server=server, related="tools", row=tool("a"), position=7).position == 7
    )
    assert parts.part_create(server=server, related="tools", row=tool("b")).position == 8


def test_a_move_renumbers_from_zero_and_an_unknown_part_is_refused(server):
    a, b, c = (
        parts.part_create(server=server, related="tools", row=tool(n), position=5) for n in "abc"
    )
    assert parts.part_move(server=server, related="tools", pk=c.pk, direction="up")
    assert [(t.name, t.position) for t in server.tools.order_by("position", "id")] == [
        ("a", 0),
        ("c", 1),
        ("b", 2),
    ]
    assert not parts.part_move(server=server, related="tools", pk=10**9, direction="up")


def test_a_toggle_switches_a_tool_off_and_on(server):
    row = parts.part_create(server=server, related="tools", row=tool("a"))
    assert parts.tool_toggle(tool=row).enabled is False
    assert Tool.objects.get(pk=row.pk).enabled is False
    assert parts.tool_toggle(tool=row).enabled is True


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_to_one_server_take_distinct_positions(org):
    server = Server.objects.create(organization=org, slug="parts-race", name="race")
    start, failed = threading.Barrier(4), []

    def append(name):
        try:
            start.wait(5)
            parts.part_create(server=server, related="tools", row=tool(name))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            failed.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=append, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failed == []
    assert sorted(server.tools.values_list("position", flat=True)) == [0, 1, 2, 3]
