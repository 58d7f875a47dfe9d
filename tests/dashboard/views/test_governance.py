"""The dashboard's governance pages: a key's allowed tools (when creating it and on its Access
page) and the organization's usage against its quotas."""

import time

from django.test import Client

from accounts.models import ApiKey, Membership
from infra import keys
from infra.redis import sync_client
from servers.quotas import month_of
from tests.dashboard.views.test_role_controls import as_role


def test_a_key_is_created_limited_to_the_ticked_tools(member_client, org, server, tool):
    ticked = f"{server.pk}|tools|echo"
    response = member_client.post(
        "/keys/new/", {"name": "Narrow", "items": [ticked], "per_minute": "20"}
    )
    assert response.status_code == 200
    key = ApiKey.objects.get(organization=org, name="Narrow")
    assert key.access == {str(server.pk): {"tools": ["echo"]}}
    assert key.limits == {"perMinute": 20}


def test_the_access_page_shows_and_changes_what_a_key_may_use(
    member_client, user, org, server, tool
):
    key, _ = ApiKey.issue(org, "k", created_by=user)
    page = member_client.get(f"/keys/{key.pk}/access/").content.decode()
    assert f'value="{server.pk}|tools|echo"' in page

    response = member_client.post(f"/keys/{key.pk}/access/", {"items": [f"{server.pk}|tools|echo"]})
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.access == {str(server.pk): {"tools": ["echo"]}}
    assert "Limited tools" in member_client.get("/keys/").content.decode()

    member_client.post(f"/keys/{key.pk}/access/", {"items": []})
    key.refresh_from_db()
    assert key.access == {}


def test_the_usage_page_shows_calls_against_the_quota_and_only_owners_change_it(member_client, org):
    org.monthly_call_quota = 200
    org.save()
    sync_client().set(keys.quota_month(org.pk, month_of(time.time())), 50)
    page = member_client.get("/usage/").content.decode()
    assert "50 of 200" in page and "150 left" in page

    assert member_client.post("/usage/", {"monthly_call_quota": "300"}).status_code == 302
    org.refresh_from_db()
    assert org.monthly_call_quota == 300

    # A viewer sees the usage, never the quota form, and cannot post it.
    viewer = Client()
    as_role(viewer, org, Membership.VIEWER)
    assert "Save quotas" not in viewer.get("/usage/").content.decode()
    assert viewer.post("/usage/", {"monthly_call_quota": "0"}).status_code == 403
