"""Connected accounts against a real OAuth provider on loopback (tests/identity: the npm
package oidc-provider on Node 22, with a protected API standing in for GitHub), a live getmcp
(uvicorn on the test database) and headless Chromium driving getmcp's connect page and the
provider's login and consent pages."""

import shutil
from types import SimpleNamespace

import mcp_types as types
import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from accounts.models import ApiKey, Membership, ServiceAccount, User
from connections.models import Provider
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.identity import browser as oidc_browser
from vault.models import NetworkAllowance

PASSWORD = "connected accounts password 7"
# Access tokens of the provider's client for getmcp live this long, so refreshes come often.
SHORT_TOKEN_SECONDS = 4
# The protocol eras a client is run in: a 2025-11-25 session, or stateless 2026-07-28.
SESSION, STATELESS = "legacy", "2026-07-28"


@pytest.fixture(scope="module")
def live(live_database):
    if not shutil.which(oidc_browser.CHROMIUM):
        pytest.skip("Chromium is not installed")
    server = LiveServer(live_database, own_site_url=True)
    yield server
    server.stop()


def _person(email: str) -> User:
    user = User.objects.create_user(email, PASSWORD)
    # The live server does not know the test run's fast hasher; few iterations keep it fast.
    user.password = PBKDF2PasswordHasher().encode(PASSWORD, "connections-salt", iterations=1000)
    user.save(update_fields=["password"])
    return user


def definition(slug: str, api: str) -> dict:
    return {
        "slug": slug,
        "name": f"srv-{slug}",
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
            },
            {
                "name": "my_items",
                "description": "The caller's items at the provider.",
                "inputSchema": {"type": "object", "properties": {}},
                "kind": "http",
                "config": {"method": "GET", "url": f"{api}/items", "connection": "corp"},
            },
            {
                "name": "my_items_in_code",
                "description": "The caller's items, fetched by code with their token.",
                "inputSchema": {"type": "object", "properties": {}},
                "kind": "code",
                "config": {
                    "language": "python",
                    "connections": ["corp"],
                    "source": (
                        "async def main(args, ctx):\n"
                        f"    r = await fetch('{api}/items', headers={{'Authorization': "
                        "'Bearer ' + connections['corp']})\n"
                        "    return {'titles': [item['title'] for item in r['json']]}\n"
                    ),
                },
            },
        ],
    }


@pytest.fixture
def world(committed, unique, live, oidc_provider):
    """An organization with two people, a server whose tools act through the `corp` provider
    (the test OpenID provider, access tokens living SHORT_TOKEN_SECONDS), each person's API key,
    a service account's key, and each person's account at the provider."""
    client = oidc_provider.add_client(
        redirect_uris=[f"{live.url}/connections/callback/"],
        access_token_ttl=SHORT_TOKEN_SECONDS,
    )

    def make():
        ada = _person(f"ada-{unique}@example.com")
        bob = _person(f"bob-{unique}@example.com")
        org = ada.personal_organization()
        Membership.objects.create(user=bob, organization=org, role=Membership.MEMBER)
        # The provider and its API run on this machine: the organization may reach loopback,
        # as staff allow a customer's self-hosted provider (vault.NetworkAllowance).
        NetworkAllowance.objects.create(organization=org, cidr="127.0.0.0/8")
        server = import_definition(definition(f"conn-{unique}", oidc_provider.api), org)
        provider = Provider(
            organization=org,
            key="corp",
            name="Corp",
            authorization_url=f"{oidc_provider.issuer}/auth",
            token_url=f"{oidc_provider.issuer}/token",
            revocation_url=f"{oidc_provider.issuer}/token/revocation",
            client_id=client.client_id,
            client_auth="client_secret_basic",
            scopes=["openid"],
            pkce=True,
        )
        provider.set_client_secret(client.client_secret)
        provider.save()
        _, ada_key = ApiKey.issue(org, "ada's key", created_by=ada)
        _, bob_key = ApiKey.issue(org, "bob's key", created_by=bob)
        robot = ServiceAccount.objects.create(organization=org, name="robot", created_by=ada)
        _, robot_key = ApiKey.issue(org, "robot key", service_account=robot)
        return SimpleNamespace(
            org=org,
            server=server,
            provider=provider,
            ada=ada,
            bob=bob,
            ada_key=ada_key,
            bob_key=bob_key,
            robot_key=robot_key,
        )

    made = committed(make)
    made.client = client
    made.ada_upstream = oidc_provider.add_user(
        email=made.ada.email, items=[{"id": "a1", "title": "Ada's private note"}]
    )
    made.bob_upstream = oidc_provider.add_user(
        email=made.bob.email, items=[{"id": "b1", "title": "Bob's private note"}]
    )
    return made


class Person:
    """A person at their MCP client: a browser (signed in to nothing yet), the URL elicitations
    their client was sent, and the notifications it got."""

    def __init__(self, page, live, provider, user, upstream):
        self.page, self.live, self.provider = page, live, provider
        self.user, self.upstream = user, upstream
        self.asked: list = []
        self.notified: list = []

    async def connect(self, url: str) -> None:
        """What the person does with the link: open it, sign in to getmcp if asked, continue,
        sign in to the provider and allow."""
        page = self.page
        await page.goto(url)
        if "/login/" in page.url:
            await page.fill("input[name=username]", self.user.email)
            await page.fill("input[name=password]", PASSWORD)
            async with page.expect_navigation(url=lambda u: "/login/" not in u):
                await page.click("button[type=submit]")
        assert await page.inner_text("[data-connect-person]") == self.user.email
        async with page.expect_navigation(url=lambda u: u.startswith(self.provider.issuer)):
            await page.click("[data-connect-continue]")
        await self.provider.sign_in(
            page,
            page.url,
            user=self.upstream,
            redirect_prefix=f"{self.live.url}/connections/callback/",
        )
        await page.wait_for_selector("[data-connected]")

    async def on_elicit(self, context, params):
        assert params.mode == "url"
        self.asked.append(params)
        await self.connect(params.url)
        return types.ElicitResult(action="accept")

    async def on_message(self, message):
        if isinstance(message, types.ServerNotification | types.ElicitCompleteNotification):
            root = getattr(message, "root", message)
            if isinstance(root, types.ElicitCompleteNotification):
                self.notified.append(root.params.elicitation_id)


@pytest.fixture
async def chromium():
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=oidc_browser.CHROMIUM, args=oidc_browser.ARGS
        )
        try:
            yield browser
        finally:
            await browser.close()


async def person_of(chromium, live, oidc_provider, user, upstream) -> Person:
    context = await chromium.new_context()
    context.set_default_timeout(30_000)
    return Person(await context.new_page(), live, oidc_provider, user, upstream)


def client(live, slug, key, mode, person: Person | None = None) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    callbacks = {}
    if person is not None:
        callbacks = {"elicitation_callback": person.on_elicit, "message_handler": person.on_message}
    return Client(
        streamable_http_client(live.mcp_url(slug), http_client=http), mode=mode, **callbacks
    )


def text_of(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")
