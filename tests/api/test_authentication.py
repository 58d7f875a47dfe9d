from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiKey
from api.models import PersonalAccessToken


@pytest.fixture
def raw_token(user):
    return PersonalAccessToken.issue(user, "laptop")[1]


def get(header=None):
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    return client.get("/api/organizations/")


@pytest.mark.parametrize("scheme", ["Token", "Bearer", "token"])
def test_a_token_works_with_either_scheme(raw_token, scheme, org):
    response = get(f"{scheme} {raw_token}")
    assert response.status_code == 200
    assert [o["slug"] for o in response.json()["results"]] == [org.slug]


def test_using_a_token_records_when(raw_token, user):
    get(f"Token {raw_token}")
    assert PersonalAccessToken.objects.get(user=user).last_used_at is not None


def test_no_credentials_answer_401_with_a_challenge(db):
    response = get()
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")
    assert response.json()["error"]["code"] == "not_authenticated"


def test_a_revoked_token_answers_401(raw_token, user):
    PersonalAccessToken.objects.get(user=user).revoke()
    response = get(f"Token {raw_token}")
    assert response.status_code == 401
    assert response.json()["error"] == {
        "code": "authentication_failed",
        "message": "Invalid, expired or revoked token.",
        "fields": {},
    }


def test_an_expired_token_answers_401(raw_token, user):
    PersonalAccessToken.objects.filter(user=user).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert get(f"Bearer {raw_token}").status_code == 401


def test_an_mcp_api_key_is_refused_with_a_hint(org):
    _, raw = ApiKey.issue(org, "mcp")
    response = get(f"Bearer {raw}")
    assert response.status_code == 401
    assert "personal access token" in response.json()["error"]["message"]


@pytest.mark.parametrize("header", ["Token", "Token a b", "Token gpat_wrong"])
def test_malformed_or_unknown_tokens_answer_401(db, header):
    assert get(header).status_code == 401


def test_a_dashboard_session_works_without_a_token(client, user):
    client.force_login(user)
    assert client.get("/api/organizations/").status_code == 200
