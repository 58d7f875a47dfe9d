"""Single sign-on end to end: headless Chromium on getmcp's sign-in page, “Sign in with SSO”,
the organization's real OpenID provider (oidc-provider on loopback, tests/identity), back to the
dashboard signed in; just-in-time membership, the role from the groups claim on each sign-in, and
an ID token with another nonce, or a provider with another issuer, refused."""

import asyncio
import re
from dataclasses import dataclass

import httpx2
import pytest
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session

from accounts.models import Membership, Organization, User
from audit.models import AuditEvent
from sso.models import Connection, Identity
from sso.sessions import SSO_SIGN_IN
from tests.conftest import LiveServer
from tests.identity.browser import ARGS, CHROMIUM
from vault.models import NetworkAllowance

pytestmark = pytest.mark.xdist_group("sso-browser")


@pytest.fixture(scope="module")
def sso_server(live_database):
    # SITE_URL is this server: the redirect URI registered at the provider names it.
    server = LiveServer(live_database, own_site_url=True)
    yield server
    server.stop()


@dataclass
class World:
    org: Organization
    domain: str
    connection: Connection
    callback: str


@pytest.fixture
def world(committed, unique, oidc_provider, sso_server):
    """An organization whose people at <unique>.example sign in through the test provider."""
    callback = f"{sso_server.url}/sso/callback/"
    client = oidc_provider.add_client(redirect_uris=[callback])
    domain = f"corp-{unique}.example"

    def make():
        owner = User.objects.create_user(f"owner@{domain}", "a long enough password")
        org = owner.personal_organization()
        org.name = f"Corp {unique}"
        org.save()
        # The provider runs on this machine's loopback, which the SSRF guard refuses unless
        # an operator allows it for the organization (as for a self-hosted Keycloak).
        NetworkAllowance.objects.create(organization=org, cidr="127.0.0.0/8")
        connection = Connection(
            organization=org,
            issuer=oidc_provider.issuer,
            client_id=client.client_id,
            allowed_domains=[domain],
            default_role=Membership.VIEWER,
            role_mapping={"engineering": Membership.MEMBER, "platform-admins": Membership.ADMIN},
        )
        connection.set_client_secret(client.client_secret)
        connection.save()
        return World(org, domain, connection, callback)

    return committed(make)


def through_the_sign_in_page(server, provider, world, person, *, nonce: str | None = None):
    """Chromium: getmcp's sign-in page, “Sign in with SSO”, the person's work email, the
    provider's login and consent, back to getmcp. Returns (final URL, page text)."""
    from playwright.async_api import async_playwright

    async def run():
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = await browser.new_page()
                if nonce is not None:
                    # Another nonce than the one getmcp keeps for this sign-in: the provider signs
                    # an ID token for it, which getmcp must refuse.
                    async def swap_nonce(route):
                        url = re.sub(r"nonce=[^&]+", f"nonce={nonce}", route.request.url)
                        await route.continue_(url=url)

                    await page.route(f"{provider.issuer}/auth?*", swap_nonce)
                await page.goto(f"{server.url}/login/")
                await page.click("a[data-sso-start]")
                await page.fill("input[name=email]", person.email)
                async with page.expect_navigation(url=f"{provider.issuer}/interaction/**"):
                    await page.click("button[type=submit]")
                await provider.sign_in(page, None, user=person, redirect_prefix=world.callback)
                return page.url, " ".join((await page.inner_text("body")).split())
            finally:
                await browser.close()

    return asyncio.run(run())


def membership_of(committed, world, email):
    return committed(
        lambda: Membership.objects.filter(organization=world.org, user__email=email).first()
    )


def test_a_newcomer_signs_in_with_sso_and_joins_with_the_default_role(
    committed, world, oidc_provider, sso_server
):
    ada = oidc_provider.add_user(email=f"ada@{world.domain}", name="Ada Lovelace")

    url, text = through_the_sign_in_page(sso_server, oidc_provider, world, ada)

    assert url.startswith(sso_server.url) and "/login/" not in url and "/sso/" not in url
    assert f"Welcome to {world.org.name}" in text
    membership = membership_of(committed, world, ada.email)
    assert membership.role == Membership.VIEWER
    identity = committed(lambda: Identity.objects.get(connection=world.connection))
    assert (identity.subject, identity.email) == (ada.sub, ada.email)
    actions = committed(
        lambda: set(
            AuditEvent.objects.filter(organization_id=world.org.pk).values_list("action", flat=True)
        )
    )
    assert {"sso.join", "sso.sign_in"} <= actions


def test_the_groups_claim_sets_the_role_on_every_sign_in(
    committed, world, oidc_provider, sso_server
):
    grace = oidc_provider.add_user(email=f"grace@{world.domain}", groups=["platform-admins"])
    through_the_sign_in_page(sso_server, oidc_provider, world, grace)
    assert membership_of(committed, world, grace.email).role == Membership.ADMIN

    # The provider moves her to another group: her next sign-in here follows.
    moved = oidc_provider.add_user(
        email=grace.email, sub=grace.sub, password=grace.password, groups=["engineering"]
    )
    through_the_sign_in_page(sso_server, oidc_provider, world, moved)
    assert membership_of(committed, world, grace.email).role == Membership.MEMBER


def test_an_id_token_with_another_nonce_is_refused(committed, world, oidc_provider, sso_server):
    eve = oidc_provider.add_user(email=f"eve@{world.domain}")

    url, text = through_the_sign_in_page(
        sso_server, oidc_provider, world, eve, nonce="not-the-nonce-of-this-sign-in"
    )

    assert url.startswith(f"{sso_server.url}/sso/callback/")
    assert "The ID token was refused" in text and "nonce" in text
    assert membership_of(committed, world, eve.email) is None
    refused = committed(
        lambda: AuditEvent.objects.get(organization_id=world.org.pk, action="sso.sign_in_refused")
    )
    assert "nonce" in refused.diff["detail"]["reason"]


def test_a_provider_answering_for_another_issuer_is_refused(
    committed, world, oidc_provider, sso_server
):
    # The same provider under another name: its discovery document names 127.0.0.1, not this.
    other = oidc_provider.issuer.replace("127.0.0.1", "localhost")
    committed(lambda: Connection.objects.filter(pk=world.connection.pk).update(issuer=other))

    response = httpx2.get(f"{sso_server.url}/sso/o/{world.org.slug}/", timeout=30)

    assert response.status_code == 502
    assert "names the issuer" in response.text and "localhost" in response.text


def test_sso_required_refuses_a_member_s_password_and_sso_still_signs_them_in(
    committed, world, oidc_provider, sso_server
):
    bob = oidc_provider.add_user(email=f"bob@{world.domain}")

    def member_with_password():
        user = User.objects.create_user(bob.email)
        # The live server checks with the deployment's hasher (this process uses a fast one).
        hasher = PBKDF2PasswordHasher()
        user.password = hasher.encode("bob's own long password", hasher.salt())
        user.save()
        Membership.objects.create(organization=world.org, user=user, role=Membership.MEMBER)
        Connection.objects.filter(pk=world.connection.pk).update(required=True)

    committed(member_with_password)
    from playwright.async_api import async_playwright

    async def password_sign_in():
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = await browser.new_page()
                await page.goto(f"{sso_server.url}/login/")
                await page.fill("input[name=username]", bob.email)
                await page.fill("input[name=password]", "bob's own long password")
                async with page.expect_navigation():
                    await page.click("button[type=submit]")
                return page.url, " ".join((await page.inner_text("body")).split())
            finally:
                await browser.close()

    url, text = asyncio.run(password_sign_in())
    assert url.startswith(f"{sso_server.url}/login/")
    assert f"{world.org.name} requires single sign-on" in text

    url, _text = through_the_sign_in_page(sso_server, oidc_provider, world, bob)
    assert "/login/" not in url and "/sso/" not in url
    # The session says it signed in through SSO, so switching "SSO required" on keeps it.
    assert committed(lambda: sso_marks_of(bob.email)) == [world.org.pk]
    assert committed(
        lambda: (
            AuditEvent.objects.filter(organization_id=world.org.pk, action="sso.sign_in")
            .filter(target_label=bob.email)
            .exists()
        )
    )


def sso_marks_of(email: str) -> list:
    """The SSO sign-in marks in the live sessions of the person with `email`."""
    person = str(User.objects.get(email=email).pk)
    marks = []
    for row in Session.objects.all():
        data = SessionStore().decode(row.session_data)
        if data.get(SESSION_KEY) == person:
            marks.append(data.get(SSO_SIGN_IN))
    return marks
