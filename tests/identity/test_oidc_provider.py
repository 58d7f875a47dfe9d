"""The test OpenID provider (oidc-provider on Node 22) is a real one: authlib, as a relying
party, completes the authorization code flow with PKCE in headless Chromium, checks the ID token
against the provider's keys, refreshes, and the provider's protected API answers with the signed
in user's data only, until the provider revokes the user's grant."""

import asyncio
import secrets

import pytest
import requests
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet

from tests.conftest import free_port
from tests.identity.browser import ARGS, CHROMIUM
from tests.waiting import wait_until

# No offline_access: the provider gives a refresh token to every client allowed the grant.
SCOPE = "openid email profile groups"


def discovery(provider) -> dict:
    return requests.get(provider.discovery_url, timeout=10).json()


def browser_sign_in(provider, url: str, user, callback: str) -> str:
    from playwright.async_api import async_playwright

    async def run() -> str:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = await browser.new_page()
                return await provider.sign_in(page, url, user=user, redirect_prefix=callback)
            finally:
                await browser.close()

    return asyncio.run(run())


def sign_in(provider, client, user, *, public: bool = False):
    """The whole code flow for `user`: returns (session, token, nonce)."""
    metadata = discovery(provider)
    callback = client.redirect_uris[0]
    session = OAuth2Session(
        client.client_id,
        client.client_secret,
        scope=SCOPE,
        redirect_uri=callback,
        code_challenge_method="S256",
        token_endpoint_auth_method="none" if public else "client_secret_basic",
    )
    verifier = secrets.token_urlsafe(48)
    nonce = secrets.token_urlsafe(16)
    url, _state = session.create_authorization_url(
        metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce
    )
    redirected = browser_sign_in(provider, url, user, callback)
    token = session.fetch_token(
        metadata["token_endpoint"], authorization_response=redirected, code_verifier=verifier
    )
    return session, token, nonce


def api(provider, path: str, access_token: str) -> requests.Response:
    return requests.get(
        provider.api + path, headers={"authorization": f"Bearer {access_token}"}, timeout=10
    )


@pytest.fixture
def callback():
    # Nothing listens there: the browser's request to it is where the code is read from.
    return f"http://127.0.0.1:{free_port()}/callback"


def test_authlib_signs_in_with_pkce_and_the_id_token_is_signed_by_the_provider(
    oidc_provider, callback
):
    client = oidc_provider.add_client(redirect_uris=[callback])
    ada = oidc_provider.add_user(email="ada@corp.example", groups=["engineering", "admins"])

    _session, token, nonce = sign_in(oidc_provider, client, ada)

    keys = KeySet.import_key_set(
        requests.get(discovery(oidc_provider)["jwks_uri"], timeout=10).json()
    )
    claims = jwt.decode(token["id_token"], keys).claims
    jwt.JWTClaimsRegistry(
        iss={"essential": True, "value": oidc_provider.issuer},
        aud={"essential": True, "value": client.client_id},
        nonce={"essential": True, "value": nonce},
        exp={"essential": True},
    ).validate(claims)
    assert (claims["sub"], claims["email"]) == (ada.sub, "ada@corp.example")
    assert claims["groups"] == ["engineering", "admins"]
    assert token["refresh_token"]


def test_a_public_client_needs_the_right_pkce_verifier(oidc_provider, callback):
    client = oidc_provider.add_client(redirect_uris=[callback], client_secret=None)
    grace = oidc_provider.add_user(email="grace@corp.example")
    metadata = discovery(oidc_provider)
    session = OAuth2Session(
        client.client_id,
        scope=SCOPE,
        redirect_uri=callback,
        code_challenge_method="S256",
        token_endpoint_auth_method="none",
    )
    url, _state = session.create_authorization_url(
        metadata["authorization_endpoint"], code_verifier=secrets.token_urlsafe(48)
    )
    redirected = browser_sign_in(oidc_provider, url, grace, callback)

    with pytest.raises(OAuthError, match="invalid_grant"):
        session.fetch_token(
            metadata["token_endpoint"],
            authorization_response=redirected,
            code_verifier=secrets.token_urlsafe(48),
        )


def test_the_protected_api_answers_each_user_with_their_own_data_only(oidc_provider, callback):
    client = oidc_provider.add_client(redirect_uris=[callback])
    ada = oidc_provider.add_user(email="ada@corp.example", items=[{"id": "a1", "title": "Ada's"}])
    bob = oidc_provider.add_user(email="bob@corp.example", items=[{"id": "b1", "title": "Bob's"}])

    _s, ada_token, _n = sign_in(oidc_provider, client, ada)
    _s, bob_token, _n = sign_in(oidc_provider, client, bob)

    me = api(oidc_provider, "/me", ada_token["access_token"])
    assert me.status_code == 200
    assert (me.json()["sub"], me.json()["email"]) == (ada.sub, "ada@corp.example")
    assert api(oidc_provider, "/items", ada_token["access_token"]).json() == [
        {"id": "a1", "title": "Ada's"}
    ]
    assert api(oidc_provider, "/items", bob_token["access_token"]).json() == [
        {"id": "b1", "title": "Bob's"}
    ]
    assert api(oidc_provider, "/me", "not-a-token").status_code == 401
    assert api(oidc_provider, "/me", ada_token["id_token"]).status_code == 401


def test_an_expired_access_token_is_refused_until_refreshed_and_revoking_ends_both(
    oidc_provider, callback
):
    client = oidc_provider.add_client(redirect_uris=[callback], access_token_ttl=2)
    ada = oidc_provider.add_user(email="ada@corp.example")
    session, token, _nonce = sign_in(oidc_provider, client, ada)
    assert api(oidc_provider, "/me", token["access_token"]).status_code == 200

    wait_until(
        lambda: api(oidc_provider, "/me", token["access_token"]).status_code == 401,
        timeout=15,
        interval=0.25,
        what="the two-second access token to expire",
    )
    refreshed = session.refresh_token(
        discovery(oidc_provider)["token_endpoint"], refresh_token=token["refresh_token"]
    )
    assert api(oidc_provider, "/me", refreshed["access_token"]).json()["sub"] == ada.sub

    assert oidc_provider.revoke(ada) == 1
    assert api(oidc_provider, "/me", refreshed["access_token"]).status_code == 401
    with pytest.raises(OAuthError, match="invalid_grant"):
        session.refresh_token(
            discovery(oidc_provider)["token_endpoint"],
            refresh_token=refreshed.get("refresh_token") or token["refresh_token"],
        )


def test_a_wrong_password_is_refused_by_the_provider(oidc_provider, callback):
    client = oidc_provider.add_client(redirect_uris=[callback])
    ada = oidc_provider.add_user(email="ada@corp.example")
    session = OAuth2Session(
        client.client_id, client.client_secret, scope=SCOPE, redirect_uri=callback
    )
    url, _state = session.create_authorization_url(
        discovery(oidc_provider)["authorization_endpoint"]
    )
    from playwright.async_api import async_playwright

    async def run():
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = await browser.new_page()
                await oidc_provider.sign_in(
                    page, url, user=ada, redirect_prefix=callback, password="wrong"
                )
            finally:
                await browser.close()

    with pytest.raises(RuntimeError, match="Wrong username or password"):
        asyncio.run(run())


def test_the_sync_helper_signs_in_too_and_a_second_authorization_skips_login_and_consent(
    oidc_provider, callback
):
    from playwright.sync_api import sync_playwright

    client = oidc_provider.add_client(redirect_uris=[callback])
    ada = oidc_provider.add_user(email="ada@corp.example")
    session = OAuth2Session(
        client.client_id, client.client_secret, scope=SCOPE, redirect_uri=callback
    )
    endpoint = discovery(oidc_provider)["authorization_endpoint"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            first, _ = session.create_authorization_url(endpoint)
            assert "code=" in oidc_provider.sign_in_sync(
                page, first, user=ada, redirect_prefix=callback
            )
            # The provider's session and the grant are remembered: straight back with a code.
            second, state = session.create_authorization_url(endpoint)
            redirected = oidc_provider.sign_in_sync(
                page, second, user=ada, redirect_prefix=callback
            )
            assert f"state={state}" in redirected and "code=" in redirected
        finally:
            browser.close()
