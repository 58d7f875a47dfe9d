from django.utils import timezone

from accounts.models import ApiKey, digest_key


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


def test_a_new_playground_key_revokes_the_previous_one(member_client, server):
    first = member_client.post(f"/servers/{server.slug}/playground/key/").json()["key"]
    member_client.post(f"/servers/{server.slug}/playground/key/")
    assert ApiKey.objects.get(digest=digest_key(first)).revoked_at is not None
    assert ApiKey.objects.filter(revoked_at=None).count() == 1


def test_minting_needs_a_post(member_client, server):
    assert member_client.get(f"/servers/{server.slug}/playground/key/").status_code == 405
