"""A refresh token presented many times at once, against a live server of two processes: the
requests all succeed, yield at most two distinct token pairs (the rotation's one, or one more),
the grant stays valid, and the database holds digests and the pair's ciphertext only."""

import asyncio
import hashlib
from types import SimpleNamespace

import httpx2
import pytest
from django.db import connection

from tests.conftest import LiveServer
from tests.gateway.endpoint.conftest import server_definition

TIMES = 20


@pytest.fixture(scope="module")
def two_processes(live_database):
    server = LiveServer(live_database, workers=2)
    yield server
    server.stop()


@pytest.fixture
def issued(committed, unique):
    """A confidential client with a grant and a first token pair, committed for the server."""

    def make():
        from accounts.models import User
        from oauth import metadata
        from oauth.clients import client_register
        from oauth.grants import grant_create
        from oauth.tokens import tokens_issue
        from servers.definition import import_definition

        user = User.objects.create_user(f"grace-{unique}@example.com", "long enough password 3")
        server = import_definition(
            server_definition(f"grace-{unique}", auth="oauth"), user.personal_organization()
        )
        client, secret = client_register(
            metadata={
                "client_name": "Eager App",
                "redirect_uris": ["https://app.example/cb"],
                "grant_types": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_method": "client_secret_post",
            },
            source_ip=None,
        )
        grant = grant_create(
            user=user,
            server=server,
            client=client,
            scope="mcp offline_access",
            resource=metadata.resource_uri(server.slug),
        )
        pair = tokens_issue(grant=grant, client=client)
        return SimpleNamespace(
            client_id=client.client_id,
            secret=secret,
            grant_id=grant.pk,
            slug=server.slug,
            pair=pair,
        )

    return committed(make)


def stored_text(grant_id: int) -> str:
    """Every column of every token row of the grant, as Postgres holds them."""
    with connection.cursor() as cursor:
        rows = []
        for table in ("oauth_accesstoken", "oauth_refreshtoken"):
            cursor.execute(
                f"SELECT row_to_json(t)::text FROM {table} t WHERE grant_id = %s",  # noqa: S608
                [grant_id],
            )
            rows += [row[0] for row in cursor.fetchall()]
    return "\n".join(rows)


async def burst(url: str, form: dict) -> list[httpx2.Response]:
    async with httpx2.AsyncClient(base_url=url, timeout=60) as http:
        return await asyncio.gather(*(http.post("/oauth/token", data=form) for _ in range(TIMES)))


def test_twenty_refreshes_at_once_yield_at_most_two_pairs_and_keep_the_grant(
    two_processes, issued, committed
):
    from oauth.models import Grant, RefreshToken

    form = {
        "grant_type": "refresh_token",
        "refresh_token": issued.pair["refresh_token"],
        "client_id": issued.client_id,
        "client_secret": issued.secret,
    }
    answers = asyncio.run(burst(two_processes.url, form))
    assert [a.status_code for a in answers] == [200] * TIMES, [a.text for a in answers]
    pairs = {(a.json()["access_token"], a.json()["refresh_token"]) for a in answers}
    print(f"\n{TIMES} concurrent refreshes of one token: {len(pairs)} distinct pair(s)")
    assert len(pairs) <= 2

    http = httpx2.Client(base_url=two_processes.url, timeout=60)
    # Repeated one by one, still inside the window: no new pair.
    again = [http.post("/oauth/token", data=form).json() for _ in range(5)]
    assert {(a["access_token"], a["refresh_token"]) for a in again} <= pairs

    # Every pair given out works: its access token on the server, its refresh token on.
    for access, refresh in pairs:
        listed = http.post(
            f"/mcp/{issued.slug}",
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={
                "authorization": f"Bearer {access}",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18",
            },
        )
        assert listed.status_code != 401, listed.text
        following = http.post("/oauth/token", data={**form, "refresh_token": refresh})
        assert following.status_code == 200, following.text

    def stored():
        grant = Grant.objects.get(pk=issued.grant_id)
        sealed = RefreshToken.objects.filter(grant=grant).exclude(successor="").count()
        return grant.revoked_at, stored_text(grant.pk), sealed

    revoked_at, text, sealed = committed(stored)
    assert revoked_at is None
    assert sealed >= 1  # the pairs are kept (encrypted) for the window
    given = [issued.pair["access_token"], issued.pair["refresh_token"]]
    given += [token for pair in pairs for token in pair]
    for token in given:
        assert token not in text and token.split("_", 2)[-1] not in text
        assert hashlib.sha256(token.encode()).hexdigest() in text  # as its digest
