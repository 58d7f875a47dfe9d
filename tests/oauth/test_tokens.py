"""The token endpoint and revocation: codes, PKCE, refresh rotation, reuse detection."""

from datetime import timedelta

from django.utils import timezone

from oauth.models import AccessToken, AuthorizationCode, Grant, RefreshToken
from tests.oauth.conftest import grants_of


# Rows other tests commit for live servers stay for the session: each check looks at the rows
# of the client this test registered.
def grant_of(registered: dict) -> Grant:
    return grants_of(registered).get()


def rows_of(model, registered: dict):
    return model.objects.filter(grant__client__client_id=registered["client_id"])


def test_a_code_and_its_verifier_give_tokens(consented, exchange):
    result = consented()
    response = exchange(
        result.code, result.verifier, resource="http://127.0.0.1:8000/mcp/oauth-srv"
    )
    assert response.status_code == 200, response.content
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["access_token"].startswith("gmcp_at_")
    assert body["refresh_token"].startswith("gmcp_rt_")
    assert body["expires_in"] > 0
    assert body["scope"] == "mcp offline_access"
    assert not AccessToken.objects.filter(digest__contains=body["access_token"]).exists()


def test_a_reused_code_is_refused_and_revokes_what_it_gave(registered, consented, exchange):
    result = consented()
    first = exchange(result.code, result.verifier)
    assert first.status_code == 200
    again = exchange(result.code, result.verifier)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert grant_of(registered).revoked_at is not None


def test_an_expired_code_is_refused(registered, consented, exchange):
    result = consented()
    rows_of(AuthorizationCode, registered).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert exchange(result.code, result.verifier).json()["error"] == "invalid_grant"


def test_a_wrong_verifier_is_refused(consented, exchange):
    result = consented()
    response = exchange(result.code, "x" * 50)
    assert response.json()["error"] == "invalid_grant"


def test_a_missing_verifier_is_refused(consented, exchange):
    result = consented()
    assert exchange(result.code, None).json()["error"] == "invalid_grant"


def test_a_different_redirect_uri_is_refused(consented, exchange):
    result = consented()
    response = exchange(
        result.code, result.verifier, redirect_uri="https://claude.com/api/mcp/auth_callback"
    )
    assert response.json()["error"] == "invalid_grant"


def test_a_different_resource_is_refused(consented, exchange):
    result = consented()
    response = exchange(result.code, result.verifier, resource="http://127.0.0.1:8000/mcp/other")
    assert response.json()["error"] == "invalid_target"


def test_another_clients_code_is_refused(client, consented, exchange):
    other = client.post(
        "/oauth/register",
        {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"]},
        content_type="application/json",
    ).json()
    result = consented()
    response = exchange(result.code, result.verifier, client_id=other["client_id"])
    assert response.json()["error"] == "invalid_grant"


def test_an_unsupported_grant_type_is_refused(client, registered):
    response = client.post(
        "/oauth/token", {"grant_type": "password", "client_id": registered["client_id"]}
    )
    assert response.json()["error"] == "unsupported_grant_type"


def refresh(client, registered, token, **extra):
    form = {
        "grant_type": "refresh_token",
        "refresh_token": token,
        "client_id": registered["client_id"],
    }
    return client.post("/oauth/token", {**form, **extra})


def test_refresh_rotates_and_a_replay_after_the_grace_window_revokes_the_grant(
    client, registered, consented, exchange
):
    result = consented()
    first = exchange(result.code, result.verifier).json()
    second = refresh(client, registered, first["refresh_token"])
    assert second.status_code == 200
    second = second.json()
    assert second["refresh_token"] != first["refresh_token"]
    rows_of(RefreshToken, registered).exclude(rotated_at=None).update(
        rotated_at=timezone.now() - timedelta(minutes=5)
    )
    replay = refresh(client, registered, first["refresh_token"])
    assert replay.json()["error"] == "invalid_grant"
    grant = grant_of(registered)
    assert grant.revoked_at is not None and grant.revoked_reason == "refresh token reuse"
    assert refresh(client, registered, second["refresh_token"]).json()["error"] == "invalid_grant"
    assert rows_of(AccessToken, registered).exists()
    assert not rows_of(AccessToken, registered).filter(revoked_at=None).exists()


def test_a_repeated_refresh_inside_the_grace_window_gets_the_same_new_pair(
    client, registered, consented, exchange
):
    result = consented()
    first = exchange(result.code, result.verifier).json()
    a = refresh(client, registered, first["refresh_token"])
    b = refresh(client, registered, first["refresh_token"])
    assert a.status_code == b.status_code == 200
    assert grant_of(registered).revoked_at is None
    a, b = a.json(), b.json()
    assert (b["access_token"], b["refresh_token"]) == (a["access_token"], a["refresh_token"])
    assert 0 < b["expires_in"] <= a["expires_in"]
    assert rows_of(AccessToken, registered).count() == 2
    assert rows_of(RefreshToken, registered).count() == 2
    # The pair given twice rotates on as any other.
    c = refresh(client, registered, a["refresh_token"]).json()
    assert c["refresh_token"] not in (a["refresh_token"], first["refresh_token"])


def test_the_pair_kept_for_the_grace_window_is_encrypted_and_forgotten_after_it(
    client, registered, consented, exchange
):
    from oauth.tasks import forget_refresh_successors

    result = consented()
    first = exchange(result.code, result.verifier).json()
    second = refresh(client, registered, first["refresh_token"]).json()
    rotated = rows_of(RefreshToken, registered).exclude(rotated_at=None).get()
    assert rotated.successor
    for value in (second["access_token"], second["refresh_token"]):
        assert value not in rotated.successor
        assert value[8:] not in rotated.successor
    # The task sweeps the whole table (other tests' committed pairs too): its count says
    # nothing of this one, the row does.
    forget_refresh_successors()
    assert RefreshToken.objects.get(pk=rotated.pk).successor == rotated.successor  # in the window
    RefreshToken.objects.filter(pk=rotated.pk).update(
        rotated_at=timezone.now() - timedelta(seconds=31)
    )
    assert forget_refresh_successors() >= 1
    assert RefreshToken.objects.get(pk=rotated.pk).successor == ""


def test_a_kept_pair_is_unreadable_once_the_window_is_over_whatever_keeps_it():
    import time

    from vault import crypto

    sealed = crypto.encrypt("a pair")
    assert crypto.decrypt_recent(sealed, max_age_seconds=30) == "a pair"
    later = time.time() + 31
    assert crypto.decrypt_recent(sealed, max_age_seconds=30, now=later) is None


def test_a_repeated_refresh_whose_access_token_was_revoked_gets_one_more_pair(
    client, registered, consented, exchange
):
    result = consented()
    first = exchange(result.code, result.verifier).json()
    second = refresh(client, registered, first["refresh_token"]).json()
    revoked = client.post(
        "/oauth/revoke", {"token": second["access_token"], "client_id": registered["client_id"]}
    )
    assert revoked.status_code == 200
    third = refresh(client, registered, first["refresh_token"]).json()
    assert third["access_token"] != second["access_token"]
    fourth = refresh(client, registered, first["refresh_token"]).json()
    assert (fourth["access_token"], fourth["refresh_token"]) == (
        third["access_token"],
        third["refresh_token"],
    )


def test_a_refresh_cannot_widen_the_scope(client, registered, consented, exchange):
    result = consented(scope="mcp:read offline_access")
    first = exchange(result.code, result.verifier).json()
    response = refresh(client, registered, first["refresh_token"], scope="mcp")
    assert response.json()["error"] == "invalid_scope"


def test_without_offline_access_or_a_refresh_grant_type_no_refresh_token(
    client, owner, oauth_server
):
    from tests.oauth.conftest import CALLBACK, consent_post, pkce, query_of

    registered = client.post(
        "/oauth/register",
        {"redirect_uris": [CALLBACK], "grant_types": ["authorization_code"]},
        content_type="application/json",
    ).json()
    verifier, challenge = pkce()
    client.force_login(owner)
    response = consent_post(
        client,
        {
            "response_type": "code",
            "client_id": registered["client_id"],
            "redirect_uri": CALLBACK,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": "http://127.0.0.1:8000/mcp/oauth-srv",
            "scope": "mcp",
        },
    )
    code = query_of(response["Location"])["code"]
    body = client.post(
        "/oauth/token",
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": CALLBACK,
            "code_verifier": verifier,
            "client_id": registered["client_id"],
        },
    ).json()
    assert "refresh_token" not in body


def test_a_confidential_client_must_authenticate(client, owner, oauth_server):
    import base64

    from tests.oauth.conftest import CALLBACK, consent_post, pkce, query_of

    registered = client.post(
        "/oauth/register",
        {"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "client_secret_basic"},
        content_type="application/json",
    ).json()
    verifier, challenge = pkce()
    client.force_login(owner)
    location = consent_post(
        client,
        {
            "response_type": "code",
            "client_id": registered["client_id"],
            "redirect_uri": CALLBACK,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": "http://127.0.0.1:8000/mcp/oauth-srv",
        },
    )["Location"]
    form = {
        "grant_type": "authorization_code",
        "code": query_of(location)["code"],
        "redirect_uri": CALLBACK,
        "code_verifier": verifier,
    }
    unauthenticated = client.post("/oauth/token", {**form, "client_id": registered["client_id"]})
    assert unauthenticated.status_code == 401
    assert unauthenticated.json()["error"] == "invalid_client"
    basic = base64.b64encode(
        f"{registered['client_id']}:{registered['client_secret']}".encode()
    ).decode()
    ok = client.post("/oauth/token", form, HTTP_AUTHORIZATION=f"Basic {basic}")
    assert ok.status_code == 200


def test_revoking_a_refresh_token_ends_the_grant(client, registered, consented, exchange):
    result = consented()
    tokens = exchange(result.code, result.verifier).json()
    response = client.post(
        "/oauth/revoke", {"token": tokens["refresh_token"], "client_id": registered["client_id"]}
    )
    assert response.status_code == 200
    assert grant_of(registered).revoked_at is not None
    assert refresh(client, registered, tokens["refresh_token"]).json()["error"] == "invalid_grant"


def test_revoking_an_access_token_ends_only_that_token(client, registered, consented, exchange):
    result = consented()
    tokens = exchange(result.code, result.verifier).json()
    client.post(
        "/oauth/revoke", {"token": tokens["access_token"], "client_id": registered["client_id"]}
    )
    assert rows_of(AccessToken, registered).get().revoked_at is not None
    assert grant_of(registered).revoked_at is None


def test_revoking_an_unknown_token_still_answers_200(client, registered):
    response = client.post("/oauth/revoke", {"token": "nope", "client_id": registered["client_id"]})
    assert response.status_code == 200


def test_long_expired_codes_and_tokens_are_collected(registered, consented, exchange):
    from oauth.tasks import collect_unused_clients

    result = consented()
    exchange(result.code, result.verifier)
    long_ago = timezone.now() - timedelta(days=3)
    for model in (AuthorizationCode, AccessToken, RefreshToken):
        assert rows_of(model, registered).exists()
        rows_of(model, registered).update(expires_at=long_ago)
    collect_unused_clients()
    assert not rows_of(AuthorizationCode, registered).exists()
    assert not rows_of(AccessToken, registered).exists()
    assert not rows_of(RefreshToken, registered).exists()
