from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import ApiKey, digest_key


@pytest.fixture
def client_factory():
    return Client


def test_the_playground_page_points_at_the_real_endpoint(member_client, server):
    page = member_client.get(f"/servers/{server.slug}/playground/").content.decode()
    assert 'data-endpoint="/mcp/weather"' in page
    assert 'data-needs-key="1"' in page


def test_a_playground_key_is_limited_to_the_server_and_short_lived(member_client, user, server):
    response = member_client.post(f"/servers/{server.slug}/playground/key/")
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    raw = response.json()["key"]
    key = ApiKey.objects.get(digest=digest_key(raw))
    assert list(key.servers.all()) == [server]
    assert key.created_by == user
    assert 3000 < (key.expires_at - timezone.now()).total_seconds() <= 3600


def test_three_playground_visits_reuse_one_key(member_client, server):
    keys = {
        member_client.post(f"/servers/{server.slug}/playground/key/").json()["key"]
        for _ in range(3)
    }
    assert len(keys) == 1
    playground = ApiKey.objects.filter(
        organization=server.organization, name__startswith="Playground · "
    )
    assert playground.count() == 1
    assert playground.get().revoked_at is None


def test_the_session_never_holds_the_playground_key_in_clear(member_client, server):
    raw = member_client.post(f"/servers/{server.slug}/playground/key/").json()["key"]
    assert raw not in str(dict(member_client.session))


def test_a_revoked_playground_key_is_replaced(member_client, server):
    first = member_client.post(f"/servers/{server.slug}/playground/key/").json()["key"]
    ApiKey.objects.get(digest=digest_key(first)).revoke()
    second = member_client.post(f"/servers/{server.slug}/playground/key/").json()["key"]
    assert second != first
    assert ApiKey.objects.filter(organization=server.organization, revoked_at=None).count() == 1


def test_a_key_about_to_expire_is_replaced_and_revoked(member_client, server):
    first = member_client.post(f"/servers/{server.slug}/playground/key/").json()["key"]
    ApiKey.objects.filter(digest=digest_key(first)).update(
        expires_at=timezone.now() + timedelta(minutes=2)
    )
    second = member_client.post(f"/servers/{server.slug}/playground/key/").json()["key"]
    assert second != first
    assert ApiKey.objects.get(digest=digest_key(first)).revoked_at is not None
    assert ApiKey.objects.filter(organization=server.organization, revoked_at=None).count() == 1


def test_another_login_gets_a_new_key_and_the_previous_one_is_revoked(
    member_client, client_factory, user, server
):
    first = member_client.post(f"/servers/{server.slug}/playground/key/").json()["key"]
    other = client_factory()
    other.force_login(user)
    second = other.post(f"/servers/{server.slug}/playground/key/").json()["key"]
    assert second != first
    assert ApiKey.objects.get(digest=digest_key(first)).revoked_at is not None
    assert ApiKey.objects.filter(organization=server.organization, revoked_at=None).count() == 1


def test_minting_needs_a_post(member_client, server):
    assert member_client.get(f"/servers/{server.slug}/playground/key/").status_code == 405
