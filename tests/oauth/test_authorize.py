"""The authorization endpoint: sign-in, consent, and every refusal the RFCs ask for."""

from html import escape
from urllib.parse import urlencode

import pytest

from accounts.models import User
from oauth import metadata
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition
from tests.oauth.conftest import CALLBACK, consent_post, grants_of, query_of


def get(client, params):
    return client.get("/oauth/authorize?" + urlencode(params))


def test_a_signed_out_user_is_sent_to_log_in_and_back(client, authorize_params):
    request = authorize_params()
    response = get(client, request.params)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=/oauth/authorize%3F")


def test_the_login_page_offers_sign_up_that_comes_back_too(client, authorize_params):
    request = authorize_params()
    next_url = "/oauth/authorize?" + urlencode(request.params)
    page = client.get("/login/?" + urlencode({"next": next_url})).content.decode()
    assert "/signup/?next=" in page
    response = client.post(
        "/signup/?" + urlencode({"next": next_url}),
        {
            "email": "newcomer@example.com",
            "password": "a long new password 9",
            "next": next_url,
        },
    )
    assert response.status_code == 302
    assert response["Location"] == next_url


def test_the_consent_page_names_client_redirect_host_org_server_and_scopes(
    client, owner, authorize_params, oauth_server
):
    client.force_login(owner)
    response = get(client, authorize_params().params)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    page = response.content.decode()
    assert "Claude" in page
    assert "Self-registered" in page
    assert "claude.ai" in page
    assert escape(oauth_server.organization.name) in page
    assert "offline_access" in page and "mcp" in page
    # Browsers apply form-action to the redirect after the POST: the client's origin is allowed.
    assert "form-action 'self' https://claude.ai;" in response["Content-Security-Policy"]


def test_consent_gives_a_code_with_state_and_iss(client, consented, settings):
    result = consented()
    assert result.code.startswith("gmcp_ac_")
    assert result.answer["state"] == "st-123"
    assert result.answer["iss"] == settings.SITE_URL.rstrip("/")


def test_denying_sends_access_denied_back(client, owner, registered, authorize_params):
    client.force_login(owner)
    response = consent_post(client, authorize_params().params, decision="deny")
    assert response.status_code == 302
    answer = query_of(response["Location"])
    assert response["Location"].startswith(CALLBACK)
    assert answer["error"] == "access_denied"
    assert answer["state"] == "st-123"
    assert not grants_of(registered).exists()


def test_only_members_of_the_servers_organization_can_grant(client, registered, authorize_params):
    stranger = User.objects.create_user("stranger@example.net", "long enough password 3")
    client.force_login(stranger)
    request = authorize_params()
    assert get(client, request.params).status_code == 403
    response = consent_post(client, request.params)
    assert response.status_code == 403
    assert not grants_of(registered).exists()


def test_a_post_without_a_session_grants_nothing_and_sends_to_log_in(
    client, registered, authorize_params
):
    params = authorize_params().params
    response = client.post("/oauth/authorize", {**params, "decision": "allow"})
    # The same request again after signing in: a consent whose session ended is no dead end.
    assert response.status_code == 302
    assert response["Location"] == "/login/?" + urlencode(
        {"next": "/oauth/authorize?" + urlencode(params)}, safe="/"
    )
    assert not grants_of(registered).exists()


@pytest.mark.parametrize(
    "overrides",
    [
        {"client_id": "gmcp_client_unknown"},
        {"client_id": None},
        {"redirect_uri": "https://evil.example.com/cb"},
        {"redirect_uri": "https://claude.ai/api/mcp/auth_callback/extra"},
    ],
)
def test_an_unknown_client_or_redirect_uri_is_shown_not_redirected(
    client, owner, authorize_params, overrides
):
    client.force_login(owner)
    response = get(client, authorize_params(**overrides).params)
    assert response.status_code == 400
    assert "cannot be used" in response.content.decode()


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"code_challenge": None}, "invalid_request"),
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge": "short"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"resource": None}, "invalid_target"),
        ({"resource": "https://elsewhere.example.com/mcp/oauth-srv"}, "invalid_target"),
        ({"resource": "http://127.0.0.1:8000/mcp/no-such-server"}, "invalid_target"),
    ],
)
def test_bad_requests_from_a_known_client_go_back_with_an_error(
    client, owner, authorize_params, overrides, error
):
    client.force_login(owner)
    response = get(client, authorize_params(**overrides).params)
    assert response.status_code == 302
    assert response["Location"].startswith(CALLBACK)
    answer = query_of(response["Location"])
    assert answer["error"] == error
    assert answer["state"] == "st-123"
    assert "iss" in answer


def test_a_server_that_does_not_take_oauth_is_an_invalid_target(client, owner, authorize_params):
    import_definition(server_definition("keys-only", auth="api_key"), owner.personal_organization())
    client.force_login(owner)
    response = get(client, authorize_params(resource=metadata.resource_uri("keys-only")).params)
    assert query_of(response["Location"])["error"] == "invalid_target"


def test_a_repeated_parameter_is_refused(client, owner, authorize_params):
    client.force_login(owner)
    params = list(authorize_params().params.items()) + [("code_challenge_method", "S256")]
    response = client.get("/oauth/authorize?" + urlencode(params))
    assert query_of(response["Location"])["error"] == "invalid_request"


def test_a_loopback_redirect_uri_matches_on_any_port(client, owner, oauth_server):
    registered = client.post(
        "/oauth/register",
        {"redirect_uris": ["http://127.0.0.1/callback"], "client_name": "Claude Code"},
        content_type="application/json",
    ).json()
    from tests.oauth.conftest import pkce

    _verifier, challenge = pkce()
    client.force_login(owner)
    params = {
        "response_type": "code",
        "client_id": registered["client_id"],
        "redirect_uri": "http://127.0.0.1:53682/callback",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": metadata.resource_uri(oauth_server.slug),
    }
    assert get(client, params).status_code == 200
    params["redirect_uri"] = "http://127.0.0.1:53682/other"
    assert get(client, params).status_code == 400


def test_unknown_scopes_are_ignored_and_mcp_is_granted(client, registered, consented):
    consented(scope="openid profile")
    assert grants_of(registered).get().scope == "mcp"
