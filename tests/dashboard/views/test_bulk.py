"""The server page of a big server: search, filters and pages of its tools, and bulk enable,
disable and delete (delete asks first); viewers see no bulk controls and are refused."""

import pytest

from servers.models import Server, Tool

from .test_role_controls import as_role

pytestmark = pytest.mark.django_db


@pytest.fixture
def big(org):
    server = Server.objects.create(organization=org, slug="big", name="Big")
    Tool.objects.bulk_create(
        Tool(
            server=server,
            name=f"op_{i:03d}",
            description="Suspend a user" if i == 7 else f"Operation {i}",
            kind="http",
            enabled=False,
            position=i,
        )
        for i in range(172)
    )
    return server


def test_the_tool_list_comes_in_pages_of_fifty(member_client, big):
    first = member_client.get("/servers/big/").content.decode()
    assert first.count('data-tool="') == 50
    assert "Page 1 of 4" in first and "showing 1–50" in first
    last = member_client.get("/servers/big/?page=4").content.decode()
    assert last.count('data-tool="') == 22 and 'data-tool="op_171"' in last


def test_a_search_finds_a_tool_by_its_description(member_client, big):
    body = member_client.get("/servers/big/?q=suspend").content.decode()
    assert body.count('data-tool="') == 1 and 'data-tool="op_007"' in body
    assert "1 of 172 tools match" in body


def test_the_state_filter_and_an_unknown_state(member_client, big):
    big.tools.filter(name="op_001").update(enabled=True)
    enabled = member_client.get("/servers/big/?state=enabled").content.decode()
    assert enabled.count('data-tool="') == 1
    everything = member_client.get("/servers/big/?state=bogus").content.decode()
    assert everything.count('data-tool="') == 50


def test_enabling_all_matching_tools_at_once(member_client, big):
    response = member_client.post(
        "/servers/big/tools/bulk/", {"action": "enable", "scope": "matching", "q": "op_"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/servers/big/?q=op_#tools"
    assert big.tools.filter(enabled=True).count() == 172
    page = member_client.get(response["Location"]).content.decode()
    assert "Enabled 172 tools." in page


def test_disabling_the_selected_tools(member_client, big):
    big.tools.update(enabled=True)
    ids = list(big.tools.order_by("position").values_list("pk", flat=True)[:3])
    member_client.post(
        "/servers/big/tools/bulk/", {"action": "disable", "scope": "selected", "ids": ids}
    )
    assert set(big.tools.filter(enabled=False).values_list("pk", flat=True)) == set(ids)


def test_deleting_asks_first_and_deletes_only_when_confirmed(member_client, big):
    ask = member_client.post(
        "/servers/big/tools/bulk/", {"action": "delete", "scope": "matching", "q": "op_00"}
    )
    assert ask.status_code == 200
    assert "Delete 10 tools?" in ask.content.decode()
    assert big.tools.count() == 172
    member_client.post(
        "/servers/big/tools/bulk/",
        {"action": "delete", "scope": "matching", "q": "op_00", "confirm": "yes"},
    )
    assert big.tools.count() == 162 and not big.tools.filter(name__startswith="op_00").exists()


def test_nothing_selected_changes_nothing(member_client, big):
    response = member_client.post("/servers/big/tools/bulk/", {"action": "enable"}, follow=True)
    assert "No tool selected" in response.content.decode()
    assert not big.tools.filter(enabled=True).exists()


def test_a_viewer_sees_no_bulk_controls_and_is_refused(client, org, big):
    as_role(client, org, "viewer")
    page = client.get("/servers/big/").content.decode()
    assert 'id="bulk-form"' not in page and "data-bulk-id" not in page
    assert 'id="tool-q"' in page  # searching is for everyone
    response = client.post("/servers/big/tools/bulk/", {"action": "enable", "scope": "matching"})
    assert response.status_code == 403
    assert not big.tools.filter(enabled=True).exists()


def test_an_outsider_cannot_touch_the_tools(client, outsider, big):
    client.force_login(outsider)
    response = client.post("/servers/big/tools/bulk/", {"action": "delete", "confirm": "yes"})
    assert response.status_code == 404
    assert big.tools.count() == 172
