"""The personal access tokens page: made once and shown once, listed, used on /api/, revoked."""

import re

from django.test import Client

from api.models import PersonalAccessToken


def create_token(client, name="CI deploy", expires_in="90"):
    response = client.post("/tokens/new/", {"name": name, "expires_in": expires_in})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    return re.search(r'value="(gpat_[^"]+)"', response.content.decode()).group(1)


def test_a_token_made_in_the_page_works_on_the_api_and_is_shown_only_once(
    member_client, user, server
):
    raw = create_token(member_client)
    api = Client()
    response = api.get("/api/servers/", HTTP_AUTHORIZATION=f"Token {raw}")
    assert response.status_code == 200
    assert server.slug in response.content.decode()
    listing = member_client.get("/tokens/").content.decode()
    assert "CI deploy" in listing
    assert raw not in listing
    assert raw[:11] in listing  # the prefix identifies it
    token = PersonalAccessToken.objects.get(user=user)
    assert token.last_used_at is not None
    assert "just now" in listing


def test_a_revoked_token_is_refused_by_the_api(member_client, user):
    raw = create_token(member_client)
    token = PersonalAccessToken.objects.get(user=user)
    response = member_client.post(f"/tokens/{token.pk}/revoke/")
    assert response.status_code == 302
    assert Client().get("/api/servers/", HTTP_AUTHORIZATION=f"Token {raw}").status_code == 401
    assert "Revoked tokens (1)" in member_client.get("/tokens/").content.decode()


def test_a_token_without_expiry_never_expires_and_one_with_expiry_does(member_client, user):
    create_token(member_client, name="forever", expires_in="")
    create_token(member_client, name="short", expires_in="30")
    assert PersonalAccessToken.objects.get(user=user, name="forever").expires_at is None
    assert PersonalAccessToken.objects.get(user=user, name="short").expires_at is not None


def test_a_token_needs_a_name(member_client, user):
    response = member_client.post("/tokens/new/", {"name": "  ", "expires_in": "30"})
    assert response.status_code == 200
    assert "name" in response.context["form"].errors
    assert not PersonalAccessToken.objects.filter(user=user).exists()


def test_another_users_token_is_neither_listed_nor_revocable(member_client, outsider):
    theirs, _ = PersonalAccessToken.issue(outsider, "mallory's script")
    assert "mallory" not in member_client.get("/tokens/").content.decode()
    assert member_client.post(f"/tokens/{theirs.pk}/revoke/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_the_pages_link_to_the_api_reference(member_client):
    for path in ("/tokens/", "/account/", "/servers/"):
        assert 'href="/api/docs/"' in member_client.get(path).content.decode(), path
    assert 'href="/tokens/"' in member_client.get("/account/").content.decode()


def test_the_tokens_page_needs_a_login(client, db):
    assert client.get("/tokens/").status_code == 302
    assert client.post("/tokens/new/", {"name": "x"}).status_code == 302
