"""Redirect URIs read as browsers read them: the tricks where Python's urllib and a browser see
different hosts, refused at registration (RFC 7591) and at the authorization endpoint, where
nothing is ever sent to a URI that did not pass (RFC 6749 §4.1.2.1), signed in or not."""

from urllib.parse import urlencode, urlsplit

import pytest

from oauth import metadata, redirects
from oauth.models import Client
from tests.oauth.conftest import pkce, query_of

# Each trick, with what a browser makes of it where that differs from what was written.
REFUSED_EVERYWHERE = [
    pytest.param("http://attacker\\@127.0.0.1/cb", id="backslash-before-at-loopback"),
    pytest.param("https://evil.example\\@good.example/cb", id="backslash-before-at-https"),
    pytest.param("http:/\\127.0.0.1/cb", id="slash-backslash-authority"),
    pytest.param("http:\\\\127.0.0.1/cb", id="two-backslashes-authority"),
    pytest.param("https://good.example\\cb", id="backslash-in-path"),
    pytest.param("https://evil.example@good.example/cb", id="userinfo"),
    pytest.param("https://user:pass@good.example/cb", id="userinfo-with-password"),
    pytest.param("https://@good.example/cb", id="empty-userinfo"),
    pytest.param("http://evil.example@127.0.0.1/cb", id="userinfo-on-loopback"),
    pytest.param("http://127.0.0.1/c\tb", id="tab-inside"),
    pytest.param("http://127.0.0.1/c\nb", id="newline-inside"),
    pytest.param("http://127.0.0.1/cb\r", id="carriage-return-at-end"),
    pytest.param("http://127.0.0\t.1/cb", id="tab-inside-host"),
    pytest.param(" https://good.example/cb", id="leading-space"),
    pytest.param("https://good.example/cb ", id="trailing-space"),
    pytest.param("https://good.example/\x00cb", id="nul"),
    pytest.param("https://good.example/\x7fcb", id="delete-character"),
    pytest.param("https://good.example/cb#frag", id="fragment"),
    pytest.param("http://127.0.0.1/cb#", id="empty-fragment"),
    pytest.param("HTTPS://good.example/cb", id="uppercase-scheme"),
    pytest.param("https://GOOD.example/cb", id="uppercase-host"),
    pytest.param("https://good.example:443/cb", id="default-port-written"),
    pytest.param("https://good.example", id="no-path"),
    pytest.param("https://good.example/a/../cb", id="dot-segments"),
    pytest.param("https://good.example/%2e%2e/cb", id="encoded-dot-segments"),
    pytest.param("https://bücher.example/cb", id="unicode-host"),
    pytest.param("https://good%2eexample/cb", id="percent-encoded-host"),
    pytest.param("http://%31%32%37.0.0.1/cb", id="percent-encoded-loopback"),
    pytest.param("http://127.1/cb", id="short-ipv4"),
    pytest.param("http://0x7f.0.0.1/cb", id="hex-ipv4"),
    pytest.param("http://0177.0.0.1/cb", id="octal-ipv4"),
    pytest.param("http://2130706433/cb", id="integer-ipv4"),
    pytest.param("http:127.0.0.1/cb", id="no-slashes"),
    pytest.param("http://[::ffff:127.0.0.1]/cb", id="ipv4-mapped-ipv6"),
    pytest.param("http://[0:0:0:0:0:0:0:1]/cb", id="long-ipv6-loopback"),
    pytest.param("http://127.0.0.1:80/cb", id="loopback-default-port-written"),
    pytest.param("http://localhost./cb", id="trailing-dot-localhost"),
    pytest.param("http://127.0.0.1.evil.example/cb", id="loopback-lookalike-name"),
    pytest.param("http://evil.example/cb", id="http-not-loopback"),
    pytest.param("javascript:alert(1)", id="javascript"),
    pytest.param("JavaScript:alert(1)", id="javascript-mixed-case"),
    pytest.param("data:text/html,<script>alert(1)</script>", id="data"),
    pytest.param("vbscript:msgbox(1)", id="vbscript"),
    pytest.param("file:///etc/passwd", id="file"),
    pytest.param("ws://127.0.0.1/cb", id="websocket"),
    pytest.param("/relative/cb", id="relative"),
    pytest.param("//good.example/cb", id="scheme-relative"),
    pytest.param("myapp:", id="private-scheme-without-path"),
]

ACCEPTED = [
    "https://claude.ai/api/mcp/auth_callback",
    "https://good.example/cb?tenant=1",
    "https://xn--bcher-kva.example/cb",
    "http://127.0.0.1/cb",
    "http://127.0.0.1:8123/cb",
    "http://[::1]/cb",
    "http://localhost:33418/",
    "cursor://anysphere/oauth",
    "com.example.app:/oauth2redirect",
]


def register(client, uris):
    return client.post(
        "/oauth/register",
        {"client_name": "Trickster", "redirect_uris": uris},
        content_type="application/json",
    )


@pytest.mark.parametrize("uri", REFUSED_EVERYWHERE)
def test_registration_refuses_a_redirect_uri_a_browser_could_read_otherwise(client, db, uri):
    response = register(client, ["https://claude.ai/api/mcp/auth_callback", uri])
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"
    # Other tests' committed clients stay for the session: this one's name says it is not there.
    assert not Client.objects.filter(client_name="Trickster").exists()


@pytest.mark.parametrize("uri", ACCEPTED)
def test_registration_accepts_uris_written_as_browsers_serialize_them(client, db, uri):
    response = register(client, [uri])
    assert response.status_code == 201, response.content
    assert response.json()["redirect_uris"] == [uri]


def test_a_non_canonical_uri_is_refused_with_the_form_a_browser_reads(client, db):
    response = register(client, ["http://127.1/cb"])
    assert "http://127.0.0.1/cb" in response.json()["error_description"]


@pytest.fixture
def loopback_client(client, db):
    """A native app registered as Claude Code registers: loopback, any port, and one https."""
    response = register(
        client, ["http://127.0.0.1/cb", "http://[::1]/cb", "https://good.example/cb"]
    )
    assert response.status_code == 201
    return response.json()["client_id"]


def authorize_params(client_id: str, redirect_uri: str | None, slug: str, **overrides) -> dict:
    _verifier, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": "st",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": metadata.resource_uri(slug),
        **overrides,
    }
    return {k: v for k, v in params.items() if v is not None}


def authorize_query(client_id: str, redirect_uri: str | None, slug: str, **overrides) -> str:
    return "/oauth/authorize?" + urlencode(
        authorize_params(client_id, redirect_uri, slug, **overrides)
    )


# What an attacker sends to a loopback client's authorization: the registered loopback URI
# dressed so that urllib still sees 127.0.0.1 (or the port-free match still holds) while a
# browser would go elsewhere, or carry something a redirect must not.
AUTHORIZE_TRICKS = [
    pytest.param("http://attacker\\@127.0.0.1/cb", id="backslash-before-at"),
    pytest.param("http://attacker\\@127.0.0.1:5000/cb", id="backslash-before-at-with-port"),
    pytest.param("http:/\\127.0.0.1:5000/cb", id="slash-backslash-authority"),
    pytest.param("http://evil.example@127.0.0.1:5000/cb", id="userinfo"),
    pytest.param("http://127.0.0.1:5000/cb#x", id="fragment"),
    pytest.param("http://127.0.0.1:5000/cb#", id="empty-fragment"),
    pytest.param("http://127.0.0.1:5000/c\tb", id="tab-inside"),
    pytest.param("http://127.0.0.1:5000/cb\n", id="newline-at-end"),
    pytest.param("HTTP://127.0.0.1:5000/cb", id="uppercase-scheme"),
    pytest.param("http://127.1:5000/cb", id="short-ipv4"),
    pytest.param("http://%31%32%37.0.0.1:5000/cb", id="percent-encoded-host"),
    pytest.param("http://[0::1]:5000/cb", id="long-ipv6-loopback"),
    pytest.param("http://127.0.0.1:5000/x/../cb", id="dot-segments"),
    pytest.param("http://127.0.0.1:05000/cb", id="zero-padded-port"),
    pytest.param("https://good.example\\@evil.example/cb", id="backslash-on-https"),
    pytest.param("https://good.example/cb#x", id="fragment-on-https"),
    pytest.param("https://GOOD.example/cb", id="uppercase-host-on-https"),
    pytest.param("https://good.example:443/cb", id="default-port-on-https"),
    pytest.param("http://good.example/cb", id="https-downgraded"),
    pytest.param("http://127.0.0.1:5000/cb/", id="other-path"),
    pytest.param("http://127.0.0.1:5000/cb?x=1", id="other-query"),
    pytest.param("http://localhost:5000/cb", id="another-loopback-name"),
]


def assert_shown_not_redirected(response):
    assert response.status_code == 400, (response.status_code, response.get("Location"))
    assert "Location" not in response
    assert "cannot be used" in response.content.decode()


@pytest.mark.parametrize("redirect_uri", AUTHORIZE_TRICKS)
def test_a_tricked_redirect_uri_gets_an_error_page_before_sign_in_even_for_an_error_answer(
    client, loopback_client, oauth_server, redirect_uri
):
    # response_type=token is an error that goes back to a verified client's redirect URI, and
    # it needs no sign-in: the redirect URI must be refused before that.
    for overrides in ({}, {"response_type": "token"}):
        response = client.get(
            authorize_query(loopback_client, redirect_uri, oauth_server.slug, **overrides)
        )
        assert_shown_not_redirected(response)


@pytest.mark.parametrize("redirect_uri", AUTHORIZE_TRICKS)
def test_a_tricked_redirect_uri_gets_an_error_page_for_a_signed_in_user(
    client, owner, loopback_client, oauth_server, redirect_uri
):
    client.force_login(owner)
    response = client.get(authorize_query(loopback_client, redirect_uri, oauth_server.slug))
    assert_shown_not_redirected(response)
    response = client.post(
        "/oauth/authorize",
        {
            **authorize_params(loopback_client, redirect_uri, oauth_server.slug),
            "decision": "deny",
        },
    )
    assert_shown_not_redirected(response)


@pytest.mark.parametrize(
    ("redirect_uri", "shown"),
    [
        ("http://127.0.0.1:5000/cb", "127.0.0.1:5000"),
        ("http://127.0.0.1/cb", "127.0.0.1"),
        ("http://[::1]:5000/cb", "[::1]:5000"),
        ("https://good.example/cb", "good.example"),
    ],
)
def test_a_loopback_or_registered_uri_is_answered_and_the_consent_page_shows_its_browser_host(
    client, owner, loopback_client, oauth_server, redirect_uri, shown
):
    signed_out = client.get(
        authorize_query(loopback_client, redirect_uri, oauth_server.slug, response_type="token")
    )
    assert signed_out.status_code == 302
    assert signed_out["Location"].startswith(redirect_uri + "?")
    assert query_of(signed_out["Location"])["error"] == "unsupported_response_type"
    client.force_login(owner)
    page = client.get(authorize_query(loopback_client, redirect_uri, oauth_server.slug))
    assert page.status_code == 200
    assert f'<dd class="mono" data-redirect-host>{shown}</dd>' in page.content.decode()


def test_a_uri_stored_before_these_rules_matches_nothing_and_is_never_a_target(
    client, owner, oauth_server
):
    # Registered by an earlier release, which accepted it.
    Client.objects.create(
        client_id="gmcp_client_old",
        kind=Client.REGISTERED,
        redirect_uris=["http://attacker\\@127.0.0.1/cb"],
    )
    for redirect_uri in ("http://attacker\\@127.0.0.1/cb", None, "http://127.0.0.1:5000/cb"):
        for overrides in ({}, {"response_type": "token"}):
            query = authorize_query("gmcp_client_old", redirect_uri, oauth_server.slug, **overrides)
            assert_shown_not_redirected(client.get(query))
    client.force_login(owner)
    assert_shown_not_redirected(
        client.get(authorize_query("gmcp_client_old", None, oauth_server.slug))
    )


@pytest.mark.parametrize(
    ("redirect_uri", "source"),
    [
        ("http://127.0.0.1:5000/cb", "http://127.0.0.1:5000"),
        ("https://good.example/cb", "https://good.example"),
        # CSP cannot name an IPv6 host: the scheme alone lets the redirect through.
        ("http://[::1]:5000/cb", "http:"),
    ],
)
def test_the_consent_form_may_end_only_at_the_browser_origin_of_the_redirect(
    client, owner, loopback_client, oauth_server, redirect_uri, source
):
    client.force_login(owner)
    page = client.get(authorize_query(loopback_client, redirect_uri, oauth_server.slug))
    assert f"form-action 'self' {source};" in page["Content-Security-Policy"]


@pytest.mark.parametrize("uri", [p.values[0] for p in REFUSED_EVERYWHERE])
def test_no_refused_uri_is_ever_turned_into_a_redirect(uri):
    with pytest.raises(ValueError):
        redirects.with_params(uri, {"code": "x"})


@pytest.mark.parametrize("uri", ACCEPTED)
def test_an_accepted_uri_gets_its_parameters_in_the_query_and_keeps_its_host(uri):
    target = redirects.with_params(uri, {"code": "c", "state": "a&b"})
    assert target.startswith(uri)
    assert redirects.host_of(target) == redirects.host_of(uri)
    if uri.startswith("http"):
        assert query_of(target)["state"] == "a&b"
        assert urlsplit(target).hostname == redirects.parse(uri).hostname.strip("[]")
