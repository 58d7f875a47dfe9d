from datetime import timedelta

from django.utils import timezone

from accounts.models import ApiKey, digest_key


def test_an_empty_key_list_explains_keys(member_client):
    assert "No API keys yet" in member_client.get("/keys/").content.decode()


def test_creating_a_key_shows_the_raw_key_once(member_client, org, server):
    expires = (timezone.now() + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M")
    response = member_client.post(
        "/keys/new/", {"name": "Laptop", "servers": [server.pk], "expires_at": expires}
    )
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    raw = response.context["raw"]
    key = ApiKey.objects.get(organization=org, name="Laptop")
    assert key.digest == digest_key(raw)
    assert list(key.servers.all()) == [server]
    assert key.expires_at is not None
    assert raw in response.content.decode()
    listing = member_client.get("/keys/").content.decode()
    assert raw not in listing
    assert key.prefix in listing


def test_a_past_expiry_is_refused_next_to_the_field(member_client, org):
    response = member_client.post("/keys/new/", {"name": "Old", "expires_at": "2001-01-01T00:00"})
    assert response.status_code == 200
    assert "expires_at" in response.context["form"].errors
    assert not ApiKey.objects.filter(organization=org).exists()


def test_a_key_cannot_be_limited_to_another_organizations_server(member_client, outsider_server):
    response = member_client.post("/keys/new/", {"name": "x", "servers": [outsider_server.pk]})
    assert "servers" in response.context["form"].errors


def test_revoking_a_key(member_client, org):
    key, _ = ApiKey.issue(org, "CI")
    response = member_client.post(f"/keys/{key.pk}/revoke/")
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert "Revoked keys (1)" in member_client.get("/keys/").content.decode()


def test_an_outsiders_key_cannot_be_revoked(member_client, outsider_org):
    key, _ = ApiKey.issue(outsider_org, "theirs")
    assert member_client.post(f"/keys/{key.pk}/revoke/").status_code == 404
    key.refresh_from_db()
    assert key.revoked_at is None
    assert "theirs" not in member_client.get("/keys/").content.decode()


def test_a_key_used_seconds_ago_was_used_just_now(member_client, org):
    from django.utils import timezone

    from accounts.models import ApiKey

    key, _ = ApiKey.issue(org, "fresh")
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
    page = member_client.get("/keys/").content.decode()
    assert "just now" in page
    assert "0\xa0minutes" not in page and "0 minutes" not in page
