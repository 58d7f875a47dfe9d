"""OAuth requests that concern a server show in its open inspector: its protected resource
metadata, a registration, the authorization (consent) and the token exchange naming it as their
`resource`, each with status and latency, refusals with their OAuth reason (an unknown client, a
reused code, a PKCE mismatch, a resource not allowed), and never a code, token, client secret or
PKCE verifier. Nothing is published while nobody watches. A live server on loopback serves it
all; the inspector socket is open on it with the owner's dashboard session."""

import asyncio
import base64
import hashlib
import json
import re
import secrets
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from infra.redis import async_client
from inspector.watch import events_channel
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.gateway.endpoint.conftest import server_definition
from tests.waiting import wait_until_async

from .conftest import watching

CALLBACK = "https://claude.ai/api/mcp/auth_callback"
CONSENT_TOKEN = re.compile(r'name="consent_token" value="([^"]+)"')


@pytest.fixture(scope="module")
def oauth_site(live_database):
    # Resource URIs are made of SITE_URL: it must be where this server answers. The test sends
    # eleven watched OAuth requests, on a quiet machine within one second: above the default
    # per-second event cap, which would rightly leave the last ones unshown.
    server = LiveServer(
        live_database, own_site_url=True, extra_env={"INSPECTOR_EVENTS_PER_SECOND": "100"}
    )
    yield server
    server.stop()


@pytest.fixture
def oauth_tenant(tenant, committed, unique):
    def make():
        server = import_definition(server_definition(f"oa-{unique}", auth="oauth"), tenant.org)
        return SimpleNamespace(slug=server.slug, server=server)

    return committed(make)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def query_of(location: str) -> dict:
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


async def subscribed(channel: str) -> bool:
    return (await async_client().pubsub_numsub(channel))[0][1] > 0


async def silent(slug_server_id: int, seconds: float) -> bool:
    """Nothing published on the server's channel for `seconds`."""
    pubsub = async_client().pubsub()
    await pubsub.subscribe(events_channel(slug_server_id))
    try:
        deadline = asyncio.get_running_loop().time() + seconds
        while (left := deadline - asyncio.get_running_loop().time()) > 0:
            message = await pubsub.get_message(timeout=left)
            if message is not None and message["type"] == "message":
                return False
        return True
    finally:
        await pubsub.aclose()


async def test_the_oauth_steps_of_a_watched_server_show_with_reasons_and_no_secrets(
    oauth_site, tenant, oauth_tenant, owner_cookie
):
    site = oauth_site.url
    resource = oauth_site.mcp_url(oauth_tenant.slug)
    async with httpx2.AsyncClient(base_url=site, timeout=30) as http:
        # Nobody watches yet: the metadata is served, nothing is published.
        silence = asyncio.create_task(silent(oauth_tenant.server.pk, 1.0))
        await wait_until_async(
            lambda: subscribed(events_channel(oauth_tenant.server.pk)),
            what="the listener for silence to subscribe",
        )
        prm_path = f"/.well-known/oauth-protected-resource/mcp/{oauth_tenant.slug}"
        assert (await http.get(prm_path)).status_code == 200
        assert await silence

        async with watching(oauth_site, oauth_tenant.slug, owner_cookie) as watch:
            events = []

            async def shown(method, **expected):
                event = await watch.event(lambda e: e["method"] == method)
                for name, value in expected.items():
                    assert event[name] == value, (name, event)
                assert event["transport"] == "oauth"
                assert event["server"] == oauth_tenant.slug
                assert event["latencyMs"] > 0
                events.append(event)
                return event

            for path in (
                prm_path,
                f"/mcp/{oauth_tenant.slug}/.well-known/oauth-protected-resource",
            ):
                assert (await http.get(path)).status_code == 200
                await shown("oauth/protected-resource", status=200, outcome="ok")

            registration = {
                "client_name": "Inspected App",
                "redirect_uris": [CALLBACK],
                "token_endpoint_auth_method": "client_secret_post",
                "resource": resource,
            }
            registered = (await http.post("/oauth/register", json=registration)).json()
            secret = registered["client_secret"]
            event = await shown("oauth/register", status=201, outcome="ok")
            assert event["client"]["name"] == "Inspected App"
            assert event["response"]["body"]["client_secret"] == "[redacted]"

            http.cookies.set("sessionid", owner_cookie)

            async def consent():
                verifier, challenge = pkce()
                params = {
                    "response_type": "code",
                    "client_id": registered["client_id"],
                    "redirect_uri": CALLBACK,
                    "state": "st-1",
                    "code_challenge": challenge,
                    "code_challenge_method": "S256",
                    "resource": resource,
                    "scope": "mcp",
                }
                page = await http.get("/oauth/authorize", params=params)
                assert page.status_code == 200
                await shown("oauth/authorize", status=200, outcome="ok")
                token = CONSENT_TOKEN.search(page.text).group(1)
                form = {**params, "decision": "allow", "consent_token": token}
                allowed = await http.post("/oauth/authorize", data=form)
                assert allowed.status_code == 302
                event = await shown("oauth/authorize", status=302, outcome="ok")
                assert query_of(event["response"]["location"])["code"] == "[redacted]"
                assert event["request"]["body"]["consent_token"] == "[redacted]"
                code = query_of(allowed.headers["location"])["code"]
                return params, code, verifier, token

            params, code, verifier, token = await consent()
            exchange = {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": CALLBACK,
                "client_id": registered["client_id"],
                "resource": resource,
            }
            wrong = await http.post(
                "/oauth/token",
                data={**exchange, "client_secret": "nope", "code_verifier": verifier},
            )
            assert wrong.status_code == 401
            event = await shown(
                "oauth/token", status=401, outcome="refused", reason="invalid_client"
            )
            assert event["target"] == "authorization_code"
            assert event["error"] == "Client authentication failed"

            good = {**exchange, "client_secret": secret, "code_verifier": verifier}
            tokens = (await http.post("/oauth/token", data=good)).json()
            event = await shown("oauth/token", status=200, outcome="ok")
            assert event["response"]["body"]["access_token"] == "[redacted]"
            assert event["request"]["body"]["code_verifier"] == "[redacted]"

            assert (await http.post("/oauth/token", data=good)).status_code == 400
            event = await shown(
                "oauth/token", status=400, outcome="refused", reason="invalid_grant"
            )
            assert event["error"] == "The authorization code was already used"

            _, second_code, _, _ = await consent()
            mismatch = {
                **exchange,
                "code": second_code,
                "client_secret": secret,
                "code_verifier": "v" * 50,
            }
            assert (await http.post("/oauth/token", data=mismatch)).status_code == 400
            event = await shown(
                "oauth/token", status=400, outcome="refused", reason="pkce_mismatch"
            )
            assert "code_verifier" in event["error"]
            assert event["reasonText"].startswith("PKCE mismatch")

        shown_text = json.dumps(events)
        for secret_value in (secret, code, second_code, verifier, tokens["access_token"], token):
            assert secret_value not in shown_text
        assert tokens.get("refresh_token", "absent") not in shown_text

        # A resource that is not an OAuth server here, in that server's own inspector.
        async with watching(oauth_site, tenant.slug, owner_cookie) as watch:
            wrong_resource = {**params, "resource": oauth_site.mcp_url(tenant.slug)}
            refused = await http.get("/oauth/authorize", params=wrong_resource)
            assert refused.status_code == 302
            event = await watch.event(lambda e: e["method"] == "oauth/authorize")
            assert (event["status"], event["outcome"], event["reason"]) == (
                302,
                "refused",
                "invalid_target",
            )
            assert event["reasonText"].startswith("Resource not allowed")
            # An HTML refusal (no redirect to trust) carries its reason too.
            unknown_client = {**wrong_resource, "client_id": "no-such-client"}
            assert (await http.get("/oauth/authorize", params=unknown_client)).status_code == 400
            event = await watch.event(lambda e: e["method"] == "oauth/authorize")
            assert (event["status"], event["reason"]) == (400, "invalid_client")


def forged_resources(site: str, slug: str) -> list[str]:
    """URIs that name the server's path but are not its canonical URI on this deployment."""
    port = site.rsplit(":", 1)[1]
    return [
        f"https://any-host.example/mcp/{slug}",
        f"http://localhost.evil.example:{port}/mcp/{slug}",
        f"http://127.0.0.1:{port}/mcp/{slug}",  # the same server, not its canonical name
        f"{site.replace('http://', 'https://')}/mcp/{slug}",
        f"http://localhost:{int(port) + 1}/mcp/{slug}",
        f"{site}/mcp/{slug}/extra",
        f"{site}/tenant/mcp/{slug}",
    ]


async def test_only_requests_naming_the_servers_real_resource_show_in_its_inspector(
    oauth_site, oauth_tenant, owner_cookie
):
    site, slug = oauth_site.url, oauth_tenant.slug
    async with (
        httpx2.AsyncClient(base_url=site, timeout=30) as http,
        watching(oauth_site, slug, owner_cookie) as watch,
    ):
        for n, resource in enumerate(forged_resources(site, slug)):
            forged = f"forged-{n}"
            await http.post(
                "/oauth/token",
                data={"grant_type": "refresh_token", "client_id": forged, "resource": resource},
            )
            await http.post(
                "/oauth/register",
                json={"client_name": forged, "redirect_uris": [CALLBACK], "resource": resource},
            )
            await http.post(
                f"/oauth/register?resource={resource}",
                json={"client_name": forged, "redirect_uris": [CALLBACK]},
            )
            await http.get("/oauth/authorize", params={"client_id": forged, "resource": resource})
        # Then one request naming the real resource: it is the first (and only) event shown.
        real = oauth_site.mcp_url(slug)
        await http.post(
            "/oauth/token",
            data={"grant_type": "refresh_token", "client_id": "real-client", "resource": real},
        )
        event = await watch.event()
        assert (event["method"], event["client"]["name"]) == ("oauth/token", "real-client")
        assert watch.seen == [], watch.seen
        # The canonical URI with a trailing slash is the same resource to the endpoints.
        await http.get("/oauth/authorize", params={"client_id": "slash", "resource": real + "/"})
        event = await watch.event()
        assert (event["method"], event["client"]["name"]) == ("oauth/authorize", "slash")
