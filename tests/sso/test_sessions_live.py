"""Switching "SSO required" on closes the live-inspector socket of a member whose dashboard
session signed in with a password, on a real web process, within a second (sessions that signed
in through SSO are kept: tests/sso/test_sessions.py)."""

import asyncio
import time

import pytest
from django.test import Client

from accounts.models import Membership, User
from inspector.consumers import CLOSE_REFUSED
from servers.definition import import_definition
from sso import config
from sso.models import Connection
from tests.conftest import LiveServer
from tests.gateway.endpoint.conftest import server_definition
from tests.inspector.conftest import watching
from tests.scim.test_inspector_sockets_live import close_code


@pytest.fixture(scope="module")
def web(live_database):
    server = LiveServer(live_database)
    yield server
    server.stop()


def test_a_password_session_s_inspector_closes_when_sso_becomes_required(web, committed, unique):
    def make():
        owner = User.objects.create_user(f"owner-{unique}@corp.example", "long enough password 1")
        org = owner.personal_organization()
        server = import_definition(server_definition(f"sso-{unique}"), org)
        sso = Connection(organization=org, issuer="https://idp.example", client_id="getmcp")
        sso.allowed_domains = ["corp.example"]
        sso.save()
        pat = User.objects.create_user(f"pat-{unique}@corp.example", "long enough password 1")
        Membership.objects.create(organization=org, user=pat, role=Membership.MEMBER)
        browser = Client()
        browser.force_login(pat)  # not marked as an SSO sign-in: a password session
        return owner, org, server.slug, browser.cookies["sessionid"].value

    owner, org, slug, password_cookie = committed(make)

    async def run():
        async with watching(web, slug, password_cookie) as by_password:
            await asyncio.to_thread(
                committed,
                lambda: config.save(actor=owner, organization=org, values={"required": True}),
            )
            started = time.monotonic()
            assert await close_code(by_password.socket, within=1.0) == CLOSE_REFUSED
            assert time.monotonic() - started < 1.0

    asyncio.run(run())
