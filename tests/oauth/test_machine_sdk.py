"""The official Python SDK's machine providers against a live server, end to end: the
IdentityAssertionOAuthProvider exchanges an ID-JAG signed by a test identity provider (its JWKS
on loopback) for a token and lists and calls tools as the member; the ClientCredentialsOAuthProvider
and the PrivateKeyJWTOAuthProvider do the same as a service account, whose calls the call log
names, and whose token stops working once the account is disabled."""

import asyncio
from types import SimpleNamespace

import httpx2
import pytest
from joserfc.jwk import RSAKey
from mcp import Client
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from accounts.models import Membership, ServiceAccount, User
from accounts.service_accounts import service_account_create, service_account_set_disabled
from activity.drain import drain_call_log
from activity.models import CallLog
from oauth.models import Grant
from oauth.service_clients import service_client_create
from oauth.trust import trusted_issuer_create
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.gateway.endpoint.conftest import server_definition
from tests.oauth.identity_provider import IdentityProvider
from tests.oauth.test_python_sdk import MemoryStorage
from tests.waiting import wait_until, wait_until_async

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@pytest.fixture(scope="module")
def machine_live(live_database):
    server = LiveServer(
        live_database, own_site_url=True, extra_env={"OAUTH_JWKS_ALLOW_HTTP_LOOPBACK": "1"}
    )
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _loopback_jwks(settings):
    # This process configures the provider (its JWKS URL is on loopback); the live server
    # fetches it (machine_live's environment says the same).
    settings.OAUTH_JWKS_ALLOW_HTTP_LOOPBACK = True


@pytest.fixture
def idp():
    provider = IdentityProvider()
    yield provider
    provider.stop()


@pytest.fixture
def org(committed, unique):
    def make():
        owner = User.objects.create_user(f"owner-{unique}@acme.example", "long enough password 1")
        member = User.objects.create_user(f"dev-{unique}@acme.example", "long enough password 2")
        organization = owner.personal_organization()
        Membership.objects.create(user=member, organization=organization, role="member")
        server = import_definition(server_definition(f"m2m-{unique}", auth="oauth"), organization)
        return SimpleNamespace(owner=owner, member=member, org=organization, server=server)

    return committed(make)


async def use_tools(url: str, provider) -> None:
    http = create_mcp_http_client(auth=provider)
    async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        tools = await client.list_tools()
        assert "echo" in {t.name for t in tools.tools}
        echoed = await client.call_tool("echo", {"message": "machine"})
        assert echoed.content[0].text == "You said machine"


async def test_the_sdk_s_identity_assertion_provider_lists_and_calls_tools(
    machine_live, org, idp, committed
):
    url = machine_live.mcp_url(org.server.slug)
    async with httpx2.AsyncClient(timeout=10) as http:
        registered = await http.post(
            machine_live.url + "/oauth/register",
            json={
                "client_name": "Enterprise agent",
                "grant_types": [JWT_BEARER],
                "token_endpoint_auth_method": "client_secret_post",
            },
        )
    agent = registered.json()
    await asyncio.to_thread(
        committed,
        lambda: trusted_issuer_create(
            actor=org.owner,
            organization=org.org,
            values={"name": "Acme IdP", "issuer": idp.issuer, "jwks_url": idp.jwks_url},
        ),
    )
    asked = []

    async def assertion_provider(audience: str, resource: str) -> str:
        asked.append((audience, resource))
        return idp.id_jag(
            audience=audience,
            resource=resource,
            client_id=agent["client_id"],
            email=org.member.email,
        )

    provider = IdentityAssertionOAuthProvider(
        server_url=url,
        storage=MemoryStorage(),
        client_id=agent["client_id"],
        client_secret=agent["client_secret"],
        issuer=machine_live.url,
        assertion_provider=assertion_provider,
    )
    await use_tools(url, provider)

    assert asked == [(machine_live.url, url)]
    grant = await asyncio.to_thread(
        committed, lambda: Grant.objects.get(client__client_id=agent["client_id"])
    )
    assert (grant.user_id, grant.source) == (org.member.pk, Grant.ID_JAG)


def service_account_with_client(org, unique, jwks=None):
    account = service_account_create(
        actor=org.owner, organization=org.org, name=f"CI {unique}", role="member"
    )
    client, secret = service_client_create(
        actor=org.owner, account=account, name="CI runner", jwks=jwks
    )
    return account, client, secret


async def refused(url: str, token: str) -> bool:
    async with httpx2.AsyncClient(timeout=10) as http:
        answer = await http.post(url, json={}, headers={"Authorization": f"Bearer {token}"})
    return answer.status_code == 401


async def test_the_sdk_s_client_credentials_provider_acts_as_the_service_account(
    machine_live, org, committed, unique
):
    url = machine_live.mcp_url(org.server.slug)
    account, client, secret = await asyncio.to_thread(
        committed, service_account_with_client, org, unique
    )
    storage = MemoryStorage()
    provider = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=client.client_id,
        client_secret=secret,
        issuer=machine_live.url,
    )
    await use_tools(url, provider)

    def rows():
        drain_call_log()
        return list(CallLog.objects.filter(server_id=org.server.pk, method="tools/call"))

    logged = await asyncio.to_thread(
        wait_until, lambda: committed(rows), interval=0.3, what="the call's log row"
    )
    assert logged[0].key_name == account.name  # the service account, as its keys are named
    assert logged[0].user_id is None
    assert logged[0].oauth_client == "CI runner"
    grant = await asyncio.to_thread(committed, lambda: Grant.objects.get(client=client))
    assert (grant.service_account_id, grant.user_id) == (account.pk, None)
    assert logged[0].oauth_grant_id == grant.pk

    token = storage.tokens.access_token
    assert not await refused(url, token)
    await asyncio.to_thread(
        committed,
        lambda: service_account_set_disabled(
            actor=org.owner, account=ServiceAccount.objects.get(pk=account.pk), disabled=True
        ),
    )
    await wait_until_async(
        lambda: refused(url, token), timeout=5, interval=0.1, what="the disabled account's token"
    )
    async with httpx2.AsyncClient(timeout=10) as http:
        again = await http.post(
            machine_live.url + "/oauth/token",
            data={"grant_type": "client_credentials", "resource": url},
            auth=(client.client_id, secret),
        )
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")


async def test_the_sdk_s_private_key_jwt_provider_acts_as_the_service_account(
    machine_live, org, committed, unique
):
    url = machine_live.mcp_url(org.server.slug)
    key = RSAKey.generate_key(2048, parameters={"kid": "ci"})
    jwks = {"keys": [key.as_dict(private=False)]}
    account, client, secret = await asyncio.to_thread(
        committed, service_account_with_client, org, unique, jwks
    )
    assert secret is None
    pem = key.as_pem(private=True).decode()
    provider = PrivateKeyJWTOAuthProvider(
        server_url=url,
        storage=MemoryStorage(),
        client_id=client.client_id,
        assertion_provider=SignedJWTParameters(
            issuer=client.client_id, subject=client.client_id, signing_key=pem
        ).create_assertion_provider(),
        issuer=machine_live.url,
    )
    await use_tools(url, provider)
    grant = await asyncio.to_thread(committed, lambda: Grant.objects.get(client=client))
    assert grant.service_account_id == account.pk
