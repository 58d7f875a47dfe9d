"""Dynamic Client Registration (RFC 7591): tolerant, validated, rate-limited, collected."""

from datetime import timedelta

import pytest
from django.utils import timezone

from oauth.models import Client
from oauth.tasks import collect_unused_clients

CALLBACKS = ["https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback"]


def register(client, **body):
    return client.post("/oauth/register", body, content_type="application/json")


def test_claude_ai_registers_with_both_callbacks(client, db):
    response = register(client, client_name="Claude", redirect_uris=CALLBACKS)
    assert response.status_code == 201
    body = response.json()
    assert body["client_id"].startswith("gmcp_client_")
    assert body["redirect_uris"] == CALLBACKS
    assert body["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in body
    assert response["Cache-Control"] == "no-store"


def test_registering_again_on_every_connect_gives_new_clients(client, db):
    ids = {register(client, redirect_uris=CALLBACKS).json()["client_id"] for _ in range(3)}
    assert len(ids) == 3


def test_a_confidential_client_gets_a_secret_stored_as_a_digest(client, db):
    body = register(
        client, redirect_uris=CALLBACKS, token_endpoint_auth_method="client_secret_post"
    ).json()
    assert body["client_secret"].startswith("gmcp_cs_")
    stored = Client.objects.get(client_id=body["client_id"])
    assert body["client_secret"] not in stored.secret_digest
    assert len(stored.secret_digest) == 64


@pytest.mark.parametrize(
    ("uris", "error"),
    [
        ([], "invalid_redirect_uri"),
        (["http://evil.example.com/cb"], "invalid_redirect_uri"),
        (["javascript:alert(1)"], "invalid_redirect_uri"),
        (["https://claude.ai/cb#frag"], "invalid_redirect_uri"),
        (["/relative"], "invalid_redirect_uri"),
        ("https://claude.ai/cb", "invalid_redirect_uri"),
    ],
)
def test_unusable_redirect_uris_are_refused(client, db, uris, error):
    response = register(client, redirect_uris=uris)
    assert response.status_code == 400
    assert response.json()["error"] == error


def test_native_and_loopback_redirect_uris_are_accepted(client, db):
    uris = ["http://127.0.0.1/callback", "http://localhost:33418/", "cursor://anysphere/oauth"]
    assert register(client, redirect_uris=uris, application_type="native").status_code == 201


@pytest.mark.parametrize(
    "body",
    [
        {"redirect_uris": CALLBACKS, "token_endpoint_auth_method": "private_key_jwt"},
        {"redirect_uris": CALLBACKS, "grant_types": ["client_credentials"]},
        {"redirect_uris": CALLBACKS, "response_types": ["token"]},
        {"redirect_uris": CALLBACKS, "client_name": "x" * 500},
    ],
)
def test_unsupported_client_metadata_is_refused(client, db, body):
    response = register(client, **body)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"


def test_a_body_that_is_not_json_is_refused(client, db):
    response = client.post("/oauth/register", "nope", content_type="application/json")
    assert response.status_code == 400


def test_registrations_are_rate_limited_per_source_address(client, db, settings):
    settings.OAUTH_REGISTRATIONS_PER_MINUTE = 3
    answers = [register(client, redirect_uris=CALLBACKS) for _ in range(4)]
    assert [a.status_code for a in answers] == [201, 201, 201, 429]
    assert int(answers[-1]["Retry-After"]) > 0
    other = client.post(
        "/oauth/register",
        {"redirect_uris": CALLBACKS},
        content_type="application/json",
        REMOTE_ADDR="10.9.8.7",
    )
    assert other.status_code == 201


def test_registrations_never_used_are_collected_and_used_ones_kept(client, db):
    unused = register(client, redirect_uris=CALLBACKS).json()["client_id"]
    used = register(client, redirect_uris=CALLBACKS).json()["client_id"]
    fresh = register(client, redirect_uris=CALLBACKS).json()["client_id"]
    long_ago = timezone.now() - timedelta(days=2)
    Client.objects.filter(client_id__in=[unused, used]).update(created_at=long_ago)
    Client.objects.filter(client_id=used).update(first_used_at=long_ago)
    assert collect_unused_clients() == 1
    mine = Client.objects.filter(client_id__in=[unused, used, fresh])
    assert set(mine.values_list("client_id", flat=True)) == {used, fresh}


def test_a_deleted_client_is_invalid_client_at_the_token_endpoint(client, db):
    response = client.post(
        "/oauth/token",
        {"grant_type": "authorization_code", "code": "x", "client_id": "gmcp_client_gone"},
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
