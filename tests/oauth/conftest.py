import base64
import hashlib
import importlib.util
import re
import secrets
import shutil
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from accounts.models import User
from oauth import metadata
from oauth.models import Grant
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.gateway.endpoint.conftest import server_definition

CALLBACK = "https://claude.ai/api/mcp/auth_callback"

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("oauth_browser", ROOT / "scripts/oauth_browser.py")
oauth_browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oauth_browser)

ACCESS_SECONDS = 3
PASSWORD = "long enough password 7"


@pytest.fixture(scope="session")
def oauth_live(live_database):
    if not shutil.which(oauth_browser.CHROMIUM):
        pytest.skip("Chromium is not installed")
    server = LiveServer(
        live_database,
        own_site_url=True,
        extra_env={
            "OAUTH_ACCESS_TOKEN_SECONDS": str(ACCESS_SECONDS),
            "OAUTH_CIMD_ALLOW_HTTP_LOOPBACK": "1",
        },
    )
    yield server
    server.stop()


@pytest.fixture
def person(committed, unique):
    def make():
        user = User.objects.create_user(f"sdk-{unique}@example.com", PASSWORD)
        # The live server does not know the test run's fast MD5 hasher; few iterations keep
        # this one fast too.
        user.password = PBKDF2PasswordHasher().encode(PASSWORD, "oauth-test-salt", iterations=1000)
        user.save(update_fields=["password"])
        server = import_definition(
            server_definition(f"sdk-{unique}", auth="oauth"), user.personal_organization()
        )
        return SimpleNamespace(user=user, server=server)

    return committed(make)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return verifier, challenge.decode()


CONSENT_TOKEN = re.compile(r'name="consent_token" value="([^"]+)"')


def consent_token_of(page) -> str | None:
    found = CONSENT_TOKEN.search(page.content.decode())
    return found.group(1) if found else None


def consent_post(client, params: dict, decision: str = "allow"):
    """What the consent page's form sends: the request, the decision and the page's token."""
    page = client.get("/oauth/authorize?" + urlencode(params))
    form = {**params, "decision": decision}
    token = consent_token_of(page)
    if token:
        form["consent_token"] = token
    return client.post("/oauth/authorize", form)


def query_of(location: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


@pytest.fixture(autouse=True)
def _fresh_registration_limits():
    """Each test starts with no registrations counted against its address this minute."""
    from infra.redis import sync_client

    redis = sync_client()
    for key in redis.scan_iter("oauth:reg:*"):
        redis.delete(key)


@pytest.fixture
def owner(db):
    return User.objects.create_user("owner@example.com", "long enough password 1")


@pytest.fixture
def oauth_server(owner):
    org = owner.personal_organization()
    return import_definition(server_definition("oauth-srv", auth="oauth"), org)


@pytest.fixture
def registered(client, db):
    """A client registered the way claude.ai does it (DCR, public, its callback)."""
    response = client.post(
        "/oauth/register",
        {
            "client_name": "Claude",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
        },
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def grants_of(registered: dict):
    """The grants of the client this test registered. Rows other tests commit for live servers
    stay for the session, so "no grant" or "the grant" is checked among these only."""
    return Grant.objects.filter(client__client_id=registered["client_id"])


@pytest.fixture
def authorize_params(registered, oauth_server):
    def make(**overrides):
        verifier, challenge = pkce()
        params = {
            "response_type": "code",
            "client_id": registered["client_id"],
            "redirect_uri": CALLBACK,
            "state": "st-123",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": metadata.resource_uri(oauth_server.slug),
            "scope": "mcp offline_access",
        }
        params.update(overrides)
        return SimpleNamespace(
            params={k: v for k, v in params.items() if v is not None}, verifier=verifier
        )

    return make


@pytest.fixture
def consented(client, owner, authorize_params):
    """Log in, consent, and return the code with what the token request needs."""

    def run(**overrides):
        request = authorize_params(**overrides)
        client.force_login(owner)
        response = consent_post(client, request.params)
        assert response.status_code == 302, response.content
        answer = query_of(response["Location"])
        return SimpleNamespace(code=answer["code"], answer=answer, **vars(request))

    return run


@pytest.fixture
def exchange(client, registered):
    def run(code, verifier, **overrides):
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": CALLBACK,
            "code_verifier": verifier,
            "client_id": registered["client_id"],
        }
        form.update(overrides)
        return client.post("/oauth/token", {k: v for k, v in form.items() if v is not None})

    return run
