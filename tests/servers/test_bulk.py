"""servers.bulk: the filters of a big server's tool list, and bulk changes that are all or
nothing, leave other servers alone, and leave an audit row per tool."""

import pytest

from audit.models import AuditEvent
from servers.bulk import BulkAction, ToolFilter, ToolState, apply_bulk, tools_matching
from servers.models import Server, Tool

pytestmark = pytest.mark.django_db


def big_server(org, slug="big", count=172) -> Server:
    server = Server.objects.create(organization=org, slug=slug, name=slug)
    Tool.objects.bulk_create(
        Tool(
            server=server,
            name=f"{'listUsers' if i % 2 else 'getTeam'}_{i}",
            description=f"Operation {i}" + (" removes a member" if i % 10 == 0 else ""),
            kind="http" if i % 3 else "static",
            enabled=False,
            position=i,
        )
        for i in range(count)
    )
    return server


def test_the_filters_match_text_in_the_name_or_description_state_and_kind(org):
    server = big_server(org)
    by_name = tools_matching(server=server, match=ToolFilter(text="LISTUSERS"))
    assert by_name.count() == 86
    by_description = tools_matching(server=server, match=ToolFilter(text="removes a member"))
    assert by_description.count() == 18
    assert tools_matching(server=server, match=ToolFilter(kind="static")).count() == 58
    assert tools_matching(server=server, match=ToolFilter(state=ToolState.ENABLED)).count() == 0
    both = ToolFilter(text="listUsers", kind="http")
    names = list(tools_matching(server=server, match=both).values_list("name", flat=True))
    assert names[0] == "listUsers_1" and len(names) == 57  # in the server's order


def test_enabling_every_matching_tool_changes_those_and_no_other(org, outsider_org):
    server = big_server(org)
    elsewhere = big_server(outsider_org, slug="elsewhere", count=5)
    match = tools_matching(server=server, match=ToolFilter(text="listUsers"))
    changed = apply_bulk(server=server, tools=match, action=BulkAction.ENABLE)
    assert len(changed) == 86
    assert server.tools.filter(enabled=True).count() == 86
    assert not elsewhere.tools.filter(enabled=True).exists()
    # Again: nothing left to change, and the call says so.
    assert apply_bulk(server=server, tools=match, action=BulkAction.ENABLE) == []


def test_a_bulk_change_leaves_one_audit_row_per_tool(org):
    server = big_server(org, count=12)
    before = AuditEvent.objects.filter(action="tool.update").count()
    apply_bulk(server=server, tools=server.tools.all(), action=BulkAction.ENABLE)
    assert AuditEvent.objects.filter(action="tool.update").count() == before + 12


def test_rows_of_another_server_are_never_touched_even_when_passed_in(org, outsider_org):
    server = big_server(org, count=3)
    theirs = big_server(outsider_org, slug="theirs", count=3)
    changed = apply_bulk(server=server, tools=Tool.objects.all(), action=BulkAction.DELETE)
    assert len(changed) == 3
    assert theirs.tools.count() == 3 and server.tools.count() == 0


def test_a_bulk_change_announces_the_list_change_once(
    org, django_capture_on_commit_callbacks, monkeypatch
):
    from servers import changes

    server = big_server(org, count=30)
    sent = []
    monkeypatch.setattr(changes, "notify_sessions", lambda sid, methods, *a: sent.append(methods))
    with django_capture_on_commit_callbacks(execute=True):
        apply_bulk(server=server, tools=server.tools.all(), action=BulkAction.ENABLE)
    assert sent == [("notifications/tools/list_changed",)]
    # Separate changes (one transaction each) are each announced, as before.
    sent.clear()
    for tool in server.tools.all()[:2]:
        with django_capture_on_commit_callbacks(execute=True):
            tool.enabled = False
            tool.save()
    assert len(sent) == 2
