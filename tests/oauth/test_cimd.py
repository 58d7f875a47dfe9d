"""Client ID Metadata Documents: fetched through the SSRF guard with limits, cached by their
cache headers, and refused whenever the document does not vouch for the request."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlencode

import pytest

from oauth import metadata
from oauth.models import Client
from tests.conftest import free_port
from tests.oauth.conftest import consent_post, pkce, query_of

CALLBACK = "http://127.0.0.1/callback"


class Documents:
    """A loopback HTTP server whose answers each test sets."""

    def __init__(self):
        self.port = free_port()
        self.status = 200
        self.body = b"{}"
        self.headers = {"content-type": "application/json"}
        self.fetches = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                owner.fetches += 1
                self.send_response(owner.status)
                for name, value in owner.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(owner.body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path="/client.json") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def serve(self, document, **headers):
        self.body = json.dumps(document).encode() if not isinstance(document, bytes) else document
        self.headers.update(headers)


@pytest.fixture
def documents(settings):
    settings.OAUTH_CIMD_ALLOW_HTTP_LOOPBACK = True
    server = Documents()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def good_document(url: str, **overrides) -> dict:
    return {
        "client_id": url,
        "client_name": "Claude Code",
        "redirect_uris": [CALLBACK],
        "token_endpoint_auth_method": "none",
        **overrides,
    }


def authorize(client, client_id, oauth_server, redirect_uri="http://127.0.0.1:40123/callback"):
    _verifier, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": "s",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": metadata.resource_uri(oauth_server.slug),
    }
    return client.get("/oauth/authorize?" + urlencode(params))


def test_a_document_names_the_client_as_verified_and_its_loopback_uri_matches_any_port(
    client, owner, oauth_server, documents
):
    documents.serve(good_document(documents.url()))
    client.force_login(owner)
    response = authorize(client, documents.url(), oauth_server)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Claude Code" in page and "Verified by its metadata document" in page
    assert Client.objects.get(client_id=documents.url()).kind == Client.METADATA_DOCUMENT


def test_the_document_is_cached_as_its_headers_say(client, owner, oauth_server, documents):
    documents.serve(good_document(documents.url()), **{"cache-control": "max-age=600"})
    client.force_login(owner)
    authorize(client, documents.url(), oauth_server)
    authorize(client, documents.url(), oauth_server)
    assert documents.fetches == 1


def test_a_no_store_document_is_fetched_every_time(client, owner, oauth_server, documents):
    documents.serve(good_document(documents.url()), **{"cache-control": "no-store"})
    client.force_login(owner)
    authorize(client, documents.url(), oauth_server)
    authorize(client, documents.url(), oauth_server)
    assert documents.fetches == 2


@pytest.mark.parametrize(
    "change",
    [
        {"client_id": "http://127.0.0.1:1/other.json"},
        {"redirect_uris": ["https://elsewhere.example.com/cb"]},
        {"token_endpoint_auth_method": "client_secret_basic"},
        {"client_secret": "shh"},
        {"redirect_uris": "not a list"},
    ],
)
def test_a_document_that_does_not_vouch_for_the_request_is_refused(
    client, owner, oauth_server, documents, change
):
    documents.serve(good_document(documents.url(), **change))
    client.force_login(owner)
    response = authorize(client, documents.url(), oauth_server)
    assert response.status_code == 400  # shown, never redirected


def test_a_document_that_is_too_large_not_json_or_missing_is_refused(
    client, owner, oauth_server, documents, settings
):
    client.force_login(owner)
    settings.OAUTH_CIMD_MAX_BYTES = 200
    documents.serve(good_document(documents.url(), client_name="x" * 300))
    assert authorize(client, documents.url(), oauth_server).status_code == 400
    settings.OAUTH_CIMD_MAX_BYTES = 65536
    documents.serve(b"<html>not json</html>")
    assert authorize(client, documents.url(), oauth_server).status_code == 400
    documents.status = 404
    documents.serve(good_document(documents.url()))
    assert authorize(client, documents.url(), oauth_server).status_code == 400


def test_a_redirecting_document_is_refused(client, owner, oauth_server, documents):
    documents.status = 302
    documents.serve(b"", location="http://127.0.0.1:1/elsewhere.json")
    client.force_login(owner)
    assert authorize(client, documents.url(), oauth_server).status_code == 400


def test_http_documents_are_refused_without_the_test_setting(client, owner, oauth_server, settings):
    settings.OAUTH_CIMD_ALLOW_HTTP_LOOPBACK = False
    client.force_login(owner)
    assert authorize(client, "http://127.0.0.1:9/client.json", oauth_server).status_code == 400


def test_a_private_address_is_never_fetched(client, owner, oauth_server):
    # https to a private address: the SSRF guard refuses before any connection.
    client.force_login(owner)
    response = authorize(client, "https://10.0.0.1/client.json", oauth_server)
    assert response.status_code == 400
    assert "Could not fetch" in response.content.decode()


def test_a_document_url_without_a_path_is_refused(client, owner, oauth_server):
    client.force_login(owner)
    assert authorize(client, "https://example.com/", oauth_server).status_code == 400


def test_the_document_client_gets_tokens_and_the_deny_redirect(
    client, owner, oauth_server, documents
):
    documents.serve(good_document(documents.url()))
    client.force_login(owner)
    verifier, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": documents.url(),
        "redirect_uri": "http://127.0.0.1:40123/callback",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": metadata.resource_uri(oauth_server.slug),
    }
    code = query_of(consent_post(client, params)["Location"])["code"]
    tokens = client.post(
        "/oauth/token",
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": "http://127.0.0.1:40123/callback",
            "code_verifier": verifier,
            "client_id": documents.url(),
        },
    )
    assert tokens.status_code == 200


@pytest.mark.parametrize(
    "url_of",
    [
        pytest.param(lambda port: f"http://127.0.0.1:{port}\\@evil.example/client.json", id="bs"),
        pytest.param(lambda port: f"https://evil.example\\@127.0.0.1:{port}/c.json", id="bs-https"),
        pytest.param(lambda port: f"http://user@127.0.0.1:{port}/client.json", id="userinfo"),
        pytest.param(lambda port: f"http://127.0.0.1:{port}/client.json#x", id="fragment"),
        pytest.param(lambda port: f"http://127.0.0.1:{port}/x/../client.json", id="dot-segments"),
        pytest.param(lambda port: f"http://127.0.0.1:{port}/client\t.json", id="tab"),
        pytest.param(lambda port: f"http://127.1:{port}/client.json", id="short-ipv4"),
    ],
)
def test_a_document_url_a_browser_reads_otherwise_is_refused_before_any_fetch(
    client, oauth_server, documents, url_of
):
    url = url_of(documents.port)
    documents.serve(good_document(url))
    # Signed out, and with an error (response_type=token) that would go back to a valid client.
    for response_type in ("code", "token"):
        query = {"client_id": url, "response_type": response_type, "state": "s"}
        response = client.get("/oauth/authorize?" + urlencode(query))
        assert response.status_code == 400  # shown, never redirected
        assert "Location" not in response
    assert documents.fetches == 0


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "http://attacker\\@127.0.0.1/callback",
        "https://evil.example\\@good.example/callback",
        "http://127.0.0.1/callback#x",
        "http://127.1/callback",
    ],
)
def test_a_document_listing_a_redirect_uri_a_browser_reads_otherwise_is_refused(
    client, owner, oauth_server, documents, redirect_uri
):
    documents.serve(good_document(documents.url(), redirect_uris=[CALLBACK, redirect_uri]))
    for tried in (redirect_uri, "http://127.0.0.1:40123/callback"):
        response = authorize(client, documents.url(), oauth_server, redirect_uri=tried)
        assert response.status_code == 400
        assert "Location" not in response
    assert not Client.objects.filter(client_id=documents.url()).exists()
