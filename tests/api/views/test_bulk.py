"""The API's bulk action on a server's tools and the tool list's filters: by ids, names or
filters, all or nothing, server.edit only, and nothing of another organization."""

import pytest

from accounts.models import Membership, User
from servers.models import Tool

from ..conftest import client_for

pytestmark = pytest.mark.django_db

BULK = "/api/servers/weather/tools/bulk/"


@pytest.fixture
def many(server):
    Tool.objects.bulk_create(
        Tool(
            server=server,
            name=f"listUsers_{i}",
            description="List users.",
            kind="http",
            enabled=False,
            position=i + 1,
        )
        for i in range(171)
    )
    return server


def test_every_tool_matching_filters_is_enabled_in_one_call(api, many):
    response = api.post(BULK, {"action": "enable", "match": {"search": "listusers"}})
    assert response.status_code == 200, response.json()
    assert response.json()["matched"] == 171 and len(response.json()["changed"]) == 171
    assert many.tools.filter(enabled=True).count() == 172  # echo was enabled already


def test_by_names_and_by_ids(api, many):
    ids = list(
        many.tools.filter(name__in=["listUsers_1", "listUsers_2"]).values_list("pk", flat=True)
    )
    assert api.post(BULK, {"action": "enable", "ids": ids}).json()["changed"] == [
        "listUsers_1",
        "listUsers_2",
    ]
    body = api.post(BULK, {"action": "delete", "names": ["echo", "nope"]}).json()
    assert body == {"action": "delete", "matched": 1, "changed": ["echo"]}


def test_exactly_one_way_of_naming_tools(api, many):
    response = api.post(BULK, {"action": "enable", "ids": [1], "names": ["echo"]})
    assert response.status_code == 400
    assert "exactly one" in str(response.json())
    assert api.post(BULK, {"action": "explode", "names": ["echo"]}).status_code == 400


def test_the_list_filters(api, many):
    found = api.get("/api/servers/weather/tools/", {"search": "listUsers_17", "enabled": "false"})
    assert found.status_code == 200
    names = [t["name"] for t in found.json()["results"]]
    assert names == ["listUsers_17", "listUsers_170"]
    assert api.get("/api/servers/weather/tools/", {"kind": "static"}).json()["count"] == 1


def test_a_viewer_is_refused_and_an_outsider_sees_no_server(api, many, org, outsider_api):
    viewer = User.objects.create_user("viewer@example.com", "a long enough password")
    Membership.objects.create(organization=org, user=viewer, role="viewer")
    response = client_for(viewer).post(BULK, {"action": "delete", "match": {}})
    assert response.status_code == 403
    assert outsider_api.post(BULK, {"action": "delete", "match": {}}).status_code == 404
    assert many.tools.count() == 172
