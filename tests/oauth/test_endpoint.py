"""OAuth access tokens at /mcp/<slug> on a live server: the challenge, audience binding, auth
modes, step-up, revocation reaching every worker, and the call log naming user and client."""

import time
from types import SimpleNamespace

import httpx2
import pytest

from accounts.models import ApiKey, Membership, User
from activity.drain import drain_call_log
from activity.models import CallLog
from oauth.clients import client_register
from oauth.grants import grant_create, grant_revoke
from oauth.metadata import resource_uri
from oauth.tokens import tokens_issue
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.gateway.endpoint.conftest import server_definition
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import wait_until

CALLBACK = "https://claude.ai/api/mcp/auth_callback"


def mint(user, server, scope="mcp offline_access", name="Claude"):
    client, _ = client_register(
        metadata={"redirect_uris": [CALLBACK], "client_name": name}, source_ip=None
    )
    grant = grant_create(
        user=user, server=server, client=client, scope=scope, resource=resource_uri(server.slug)
    )
    return grant, tokens_issue(grant=grant, client=client)["access_token"]


@pytest.fixture
def world(committed, unique):
    """One organization with an OAuth server, a second one, a key-only and a mixed server."""

    def make():
        user = User.objects.create_user(f"oa-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        servers = {
            mode: import_definition(server_definition(f"{slug}-{unique}", auth=mode), org)
            for slug, mode in [
                ("oa", "oauth"),
                ("key", "api_key"),
                ("mix", "api_key+oauth"),
            ]
        }
        # Two OAuth servers: keep them apart by name.
        servers["oauth_b"] = import_definition(server_definition(f"oc-{unique}", auth="oauth"), org)
        grant, token = mint(user, servers["oauth"])
        _key, raw_key = ApiKey.issue(org, "k")
        return SimpleNamespace(
            user=user, org=org, servers=servers, grant=grant, token=token, key=raw_key
        )

    return committed(make)


def initialize(url, token):
    return RawMcp(url, key=token).post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )


def test_an_oauth_server_challenges_with_its_resource_metadata_and_scope(asgi_server, world):
    slug = world.servers["oauth"].slug
    response = initialize(asgi_server.mcp_url(slug), None)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert (
        f'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp/{slug}"'
        in challenge
    )
    assert 'scope="mcp"' in challenge


def test_the_metadata_is_also_served_appended_to_the_servers_path(asgi_server, world):
    slug = world.servers["oauth"].slug
    inserted = httpx2.get(f"{asgi_server.url}/.well-known/oauth-protected-resource/mcp/{slug}")
    appended = httpx2.get(f"{asgi_server.mcp_url(slug)}/.well-known/oauth-protected-resource")
    assert appended.status_code == inserted.status_code == 200
    assert appended.json() == inserted.json()
    assert appended.json()["resource"] == f"http://127.0.0.1:8000/mcp/{slug}"
    assert appended.headers["access-control-allow-origin"] == "*"


def test_a_key_only_server_serves_no_metadata_at_either_place(asgi_server, world):
    slug = world.servers["api_key"].slug
    for url in (
        f"{asgi_server.url}/.well-known/oauth-protected-resource/mcp/{slug}",
        f"{asgi_server.mcp_url(slug)}/.well-known/oauth-protected-resource",
        f"{asgi_server.mcp_url('no-such-server')}/.well-known/oauth-protected-resource",
    ):
        assert httpx2.get(url).status_code == 404, url
    # Other well-known names under a server's path are not documents of the server.
    other = httpx2.get(f"{asgi_server.mcp_url(slug)}/.well-known/openid-configuration")
    assert other.status_code == 404


def test_a_key_only_server_never_mentions_oauth(asgi_server, world):
    response = initialize(asgi_server.mcp_url(world.servers["api_key"].slug), None)
    assert response.status_code == 401
    assert "resource_metadata" not in response.headers["www-authenticate"]


def test_a_token_calls_tools_on_its_server(asgi_server, world):
    client = RawMcp(asgi_server.mcp_url(world.servers["oauth"].slug), key=world.token)
    client.initialize()
    reply = client.call("tools/call", {"name": "echo", "arguments": {"message": "hi"}})
    assert reply["result"]["content"][0]["text"] == "You said hi"


def test_a_token_for_one_server_is_invalid_at_another(asgi_server, world):
    response = initialize(asgi_server.mcp_url(world.servers["oauth_b"].slug), world.token)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_auth_modes_decide_which_credentials_work(asgi_server, world, committed):
    url = asgi_server.mcp_url
    assert initialize(url(world.servers["oauth"].slug), world.key).status_code == 401
    assert initialize(url(world.servers["api_key"].slug), world.key).status_code == 200

    mixed = world.servers["api_key+oauth"]
    assert initialize(url(mixed.slug), world.key).status_code == 200
    grant_token = committed(lambda: mint(world.user, mixed)[1])
    assert initialize(url(mixed.slug), grant_token).status_code == 200


def test_a_read_only_token_lists_but_must_step_up_to_call(asgi_server, world, committed):
    server = world.servers["oauth"]
    token = committed(lambda: mint(world.user, server, scope="mcp:read")[1])
    client = RawMcp(asgi_server.mcp_url(server.slug), key=token)
    client.initialize()
    assert client.call("tools/list")["result"]["tools"]
    response, _ = client.request("tools/call", {"name": "echo", "arguments": {"message": "x"}})
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="mcp"' in challenge


def test_revoking_the_grant_stops_the_token_at_once(asgi_server, world, committed):
    client = RawMcp(asgi_server.mcp_url(world.servers["oauth"].slug), key=world.token)
    client.initialize()
    assert client.call("tools/list")["result"]["tools"]
    committed(lambda: grant_revoke(grant=world.grant, reason="test"))
    response, _ = client.request("tools/list")
    assert response.status_code == 401


def test_leaving_the_organization_stops_the_token_at_once(asgi_server, world, committed):
    client = RawMcp(asgi_server.mcp_url(world.servers["oauth"].slug), key=world.token)
    client.initialize()
    committed(lambda: Membership.objects.filter(user=world.user, organization=world.org).delete())
    response, _ = client.request("tools/list")
    assert response.status_code == 401


def test_an_expired_token_is_refused(asgi_server, world, committed):
    from oauth.models import AccessToken

    committed(
        lambda: AccessToken.objects.filter(grant=world.grant).update(expires_at="2000-01-01T00:00Z")
    )
    assert (
        initialize(asgi_server.mcp_url(world.servers["oauth"].slug), world.token).status_code == 401
    )


def test_the_call_log_names_the_user_and_the_client(asgi_server, world, committed):
    server = world.servers["oauth"]
    client = RawMcp(asgi_server.mcp_url(server.slug), key=world.token)
    client.initialize()
    client.call("tools/call", {"name": "echo", "arguments": {"message": "hi"}})

    def rows():
        drain_call_log()
        return list(CallLog.objects.filter(server_id=server.pk, method="tools/call"))

    logged = wait_until(lambda: committed(rows), interval=0.3, what="the call's log row")
    assert logged[0].user_id == world.user.pk
    assert logged[0].oauth_client == "Claude"
    assert logged[0].oauth_grant_id == world.grant.pk
    assert logged[0].api_key_id is None


@pytest.fixture(scope="module")
def second_worker(live_database):
    server = LiveServer(live_database)
    yield server
    server.stop()


def test_a_revocation_reaches_every_worker_within_a_second(
    asgi_server, second_worker, world, committed
):
    slug = world.servers["oauth"].slug
    clients = [RawMcp(s.mcp_url(slug), key=world.token) for s in (asgi_server, second_worker)]
    for client in clients:
        client.initialize()
        assert client.call("tools/list")["result"]["tools"]  # both workers have it cached
    committed(lambda: grant_revoke(grant=world.grant, reason="test"))
    revoked_at = time.monotonic()
    refused = set()
    while len(refused) < 2 and time.monotonic() - revoked_at < 1.0:
        for index, client in enumerate(clients):
            if client.request("tools/list")[0].status_code == 401:
                refused.add(index)
    assert refused == {0, 1}


async def test_a_warm_call_with_an_access_token_runs_no_sql(world, django_db_blocker):
    import httpx2

    from getmcp.asgi import application
    from tests.gateway.endpoint.test_hot_path import CALL, INIT, count_queries

    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {world.token}",
        "host": "localhost",
    }
    transport = httpx2.ASGITransport(app=application)
    with django_db_blocker.unblock():
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            url = f"/mcp/{world.servers['oauth'].slug}"
            started = await http.post(url, json=INIT, headers=headers)
            assert started.status_code == 200
            headers["mcp-session-id"] = started.headers["mcp-session-id"]
            headers["mcp-protocol-version"] = "2025-11-25"
            cold = await http.post(url, json=CALL, headers=headers)
            assert cold.json()["result"]["content"][0]["text"] == "You said warm"
            with count_queries() as executed:
                for _ in range(3):
                    warm = await http.post(url, json=CALL, headers=headers)
                    assert warm.json()["result"]["content"][0]["text"] == "You said warm"
            assert executed == []

            # The counter does see the token being loaded again once its cache is gone.
            from gateway.endpoint import auth

            auth.cache.clear()
            with count_queries() as executed:
                await http.post(url, json=CALL, headers=headers)
            assert any("oauth_accesstoken" in sql for sql in executed)
