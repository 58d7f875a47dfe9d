"""A connection's token is kept per process: a warm call of a tool that declares a connection
runs no SQL, and a revocation reaches every web process within the state mirror's bound."""

import asyncio
import json
from datetime import timedelta
from types import SimpleNamespace

import httpx2
import pytest
from django.utils import timezone
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from werkzeug import Request, Response

from accounts.models import ApiKey, User
from connections import revoking, token_cache
from connections.models import Connection, Provider
from getmcp.asgi import application
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.gateway.endpoint.test_hot_path import INIT, count_queries
from tests.waiting import wait_until_async
from vault.crypto import encrypt
from vault.models import NetworkAllowance

CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami"}}
CALL["params"]["arguments"] = {}


# The tokens the provider's API accepts, and what it answers to each (a tool's output never
# shows the token itself: it is masked).
ACCOUNTS = {"Bearer tok-1": "account of ada"}


@pytest.fixture
def api(httpserver):
    """The provider's API: names the account whose token it was sent, or refuses."""

    def me(request: Request) -> Response:
        account = ACCOUNTS.get(request.headers.get("Authorization", ""))
        return Response(account or "unknown token", status=200 if account else 401)

    httpserver.expect_request("/me").respond_with_handler(me)
    return httpserver.url_for("")[:-1]


@pytest.fixture
def world(committed, unique, api):
    """A person with an API key, a server whose tool acts through their `corp` connection, and
    that connection (a token valid for an hour)."""

    def make():
        ada = User.objects.create_user(f"ada-{unique}@example.com", "long enough password 3")
        org = ada.personal_organization()
        NetworkAllowance.objects.create(organization=org, cidr="127.0.0.0/8")
        server = import_definition(
            {
                "slug": f"tok-{unique}",
                "name": f"tok-{unique}",
                "version": "1.0.0",
                "auth": "api_key",
                "status": "active",
                "tools": [
                    {
                        "name": "whoami",
                        "description": "The caller's account at the provider.",
                        "inputSchema": {"type": "object", "properties": {}},
                        "kind": "http",
                        "config": {
                            "method": "GET",
                            "url": f"{api}/me",
                            "connection": {"provider": "corp", "scopes": ["email"]},
                        },
                    }
                ],
            },
            org,
        )
        provider = Provider.objects.create(
            organization=org,
            key="corp",
            name="Corp",
            authorization_url=f"{api}/auth",
            token_url=f"{api}/token",
            client_id="cid",
            scopes=["openid"],
        )
        connection = Connection.objects.create(
            provider=provider,
            organization=org,
            user=ada,
            access_token_ciphertext=encrypt("tok-1"),
            scopes=["email", "openid"],
            expires_at=timezone.now() + timedelta(hours=1),
            refreshed_at=timezone.now(),
        )
        _, key = ApiKey.issue(org, "ada's key", created_by=ada)
        return SimpleNamespace(org=org, ada=ada, slug=server.slug, connection=connection, key=key)

    return committed(make)


async def test_a_warm_call_of_a_connection_backed_tool_runs_no_sql(world, django_db_blocker):
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {world.key}",
        "host": "localhost",
    }
    transport = httpx2.ASGITransport(app=application)
    with django_db_blocker.unblock():
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            url = f"/mcp/{world.slug}"
            started = await http.post(url, json=INIT, headers=headers)
            headers["mcp-session-id"] = started.headers["mcp-session-id"]
            headers["mcp-protocol-version"] = "2025-11-25"

            def answer(response) -> str:
                # The call's answer may come as a JSON body or as the last event of a stream.
                body = response.text
                if "data: {" in body:
                    body = body.rsplit("data: ", 1)[1]
                return json.loads(body)["result"]["content"][0]["text"]

            cold = await http.post(url, json=CALL, headers=headers)
            assert answer(cold) == "account of ada"

            with count_queries() as executed:
                for _ in range(3):
                    warm = await http.post(url, json=CALL, headers=headers)
                    assert answer(warm) == "account of ada"
            assert executed == []

            # Without the kept token, the same call reads the provider and connection again.
            token_cache.clear()
            with count_queries() as executed:
                assert answer(await http.post(url, json=CALL, headers=headers)) == (
                    "account of ada"
                )
            assert any("connections_connection" in sql for sql in executed), executed


def _client(live: LiveServer, world) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {world.key}"})
    return Client(
        streamable_http_client(live.mcp_url(world.slug), http_client=http), mode="2026-07-28"
    )


def _text(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


@pytest.fixture(scope="module")
def two_web_processes(live_database):
    first, second = LiveServer(live_database), LiveServer(live_database)
    yield first, second
    first.stop()
    second.stop()


async def test_a_connection_revoked_through_one_process_is_refused_by_another_at_once(
    world, two_web_processes, committed, settings
):
    first, second = two_web_processes
    async with _client(first, world) as on_first, _client(second, world) as on_second:
        # Both processes now keep the token.
        for mcp in (on_first, on_second):
            for _ in range(2):
                assert _text(await mcp.call_tool("whoami", {})) == "account of ada"

        def revoke():
            connection = Connection.objects.select_related("provider").get(pk=world.connection.pk)
            revoking.revoke_own(user=world.ada, connection=connection)

        await asyncio.to_thread(committed, revoke)

        async def refused_by_both() -> bool:
            answers = [await mcp.call_tool("whoami", {}) for mcp in (on_first, on_second)]
            return all(a.is_error and "Connect" in _text(a) for a in answers)

        # Within the mirror's bound (the announcement normally arrives at once).
        await wait_until_async(
            refused_by_both,
            timeout=settings.MCP_STATE_MAX_STALE_SECONDS + 1,
            what="both processes to refuse the revoked connection's token",
        )
