"""The connected-account flow end to end, with the official Python SDK in both protocol eras:
its URL-elicitation callback drives headless Chromium through getmcp's connect page and the
test provider's login and consent; the tool then answers with data only that person can see."""

import asyncio
import time

import pytest

from connections.models import Connection
from tests.connections.conftest import PASSWORD, SESSION, STATELESS, client, person_of, text_of

pytestmark = pytest.mark.django_db(transaction=True)


def logged_connections(world) -> dict[str, set[str]]:
    """tools/call rows of the server's call log, by tool: the connections they name (the live
    server queues them in Redis; the drain, run here as the beat would, stores them)."""
    from activity.drain import drain_call_log
    from activity.models import CallLog
    from tests.waiting import wait_until

    def rows():
        drain_call_log()
        return list(
            CallLog.objects.filter(
                server_slug=world.server.slug, method="tools/call", outcome="ok"
            ).values_list("tool", "connection")
        )

    def by_tool() -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for tool, connection in rows():
            found.setdefault(tool, set()).add(connection)
        return found

    # The live server's recorder sends its rows in batches: wait for both tools' answered calls.
    wait_until(
        lambda: all("corp" in by_tool().get(tool, ()) for tool in ("my_items", "whoami")),
        timeout=30,
        what="the calls in the call log",
    )
    return by_tool()


@pytest.mark.parametrize("mode", [SESSION, STATELESS])
async def test_the_first_call_asks_to_connect_then_answers_with_that_person_s_own_data(
    live, world, oidc_provider, chromium, mode
):
    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    async with client(live, world.server.slug, world.ada_key, mode, ada) as mcp:
        first = await mcp.call_tool("my_items", {})
        assert not first.is_error, text_of(first)
        assert "Ada's private note" in text_of(first)
        assert "Bob's private note" not in text_of(first)
        assert len(ada.asked) == 1
        assert "Corp" in ada.asked[0].message
        assert ada.asked[0].url.startswith(f"{live.url}/connections/connect/")
        if mode == SESSION:
            # 2025-11-25: the completion is announced on the call's own stream.
            assert ada.notified == [ada.asked[0].elicitation_id]
        # Connected: later calls go straight through.
        assert "Ada's private note" in text_of(await mcp.call_tool("my_items", {}))
        assert len(ada.asked) == 1
        # A tool that needs a scope the connection lacks asks once more, for more access.
        me = await mcp.call_tool("whoami", {})
        assert world.ada.email in text_of(me)
        assert len(ada.asked) == 2 and "more access" in ada.asked[1].message
        assert world.ada.email in text_of(await mcp.call_tool("whoami", {}))
        assert len(ada.asked) == 2

    stored = await asyncio.to_thread(
        lambda: Connection.objects.get(provider=world.provider, user=world.ada)
    )
    # The call log names the connection each call acted through.
    logged = await asyncio.to_thread(logged_connections, world)
    if mode == SESSION:
        assert logged == {"my_items": {"corp"}, "whoami": {"corp"}}
    else:
        # The input_required rounds acted through nothing yet: they name no connection.
        assert logged == {"my_items": {"", "corp"}, "whoami": {"", "corp"}}
    assert stored.status == Connection.ACTIVE
    # Encrypted at rest: the row holds no token in the clear.
    assert "ey" not in stored.access_token_ciphertext[:2] and stored.refresh_token_ciphertext


async def test_a_code_tool_reads_the_caller_s_token_as_connections_provider(
    live, world, oidc_provider, chromium
):
    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    async with client(live, world.server.slug, world.ada_key, STATELESS, ada) as mcp:
        result = await mcp.call_tool("my_items_in_code", {})
    assert not result.is_error, text_of(result)
    assert "Ada's private note" in text_of(result)
    assert len(ada.asked) == 1


async def test_a_second_person_gets_a_connection_of_their_own(live, world, oidc_provider, chromium):
    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    bob = await person_of(chromium, live, oidc_provider, world.bob, world.bob_upstream)
    async with client(live, world.server.slug, world.ada_key, STATELESS, ada) as mcp:
        assert "Ada's private note" in text_of(await mcp.call_tool("my_items", {}))
    async with client(live, world.server.slug, world.bob_key, STATELESS, bob) as mcp:
        items = text_of(await mcp.call_tool("my_items", {}))
    assert "Bob's private note" in items and "Ada's" not in items
    assert len(bob.asked) == 1
    owners = await asyncio.to_thread(
        lambda: sorted(
            Connection.objects.filter(provider=world.provider).values_list("user__email", flat=True)
        )
    )
    assert owners == sorted([world.ada.email, world.bob.email])


async def test_a_short_lived_token_is_refreshed_over_many_calls_without_asking_again(
    live, world, oidc_provider, chromium
):
    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    async with client(live, world.server.slug, world.ada_key, STATELESS, ada) as mcp:
        assert "Ada's private note" in text_of(await mcp.call_tool("my_items", {}))
        # Access tokens live a few seconds: calls over three of their lifetimes need refreshes.
        deadline = time.monotonic() + 60
        calls = 0
        while oidc_provider.grants(world.client).get("refresh_token", 0) < 3:
            assert time.monotonic() < deadline, "no refreshes happened"
            result = await mcp.call_tool("my_items", {})
            assert not result.is_error, text_of(result)
            assert "Ada's private note" in text_of(result)
            calls += 1
        assert len(ada.asked) == 1  # never asked again
    assert oidc_provider.grants(world.client)["authorization_code"] == 1
    assert calls > 3


async def test_a_grant_revoked_upstream_leads_back_to_consent(live, world, oidc_provider, chromium):
    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    async with client(live, world.server.slug, world.ada_key, SESSION, ada) as mcp:
        assert "Ada's private note" in text_of(await mcp.call_tool("my_items", {}))
        assert oidc_provider.revoke(world.ada_upstream) >= 1
        # The stored token is refused (401), its refresh too: Ada is asked to consent again.
        after = await mcp.call_tool("my_items", {})
        assert not after.is_error, text_of(after)
        assert "Ada's private note" in text_of(after)
        assert len(ada.asked) == 2
    assert oidc_provider.grants(world.client)["authorization_code"] == 2


async def test_a_client_without_url_elicitation_gets_a_link_it_can_show(
    live, world, oidc_provider, chromium
):
    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    async with client(live, world.server.slug, world.ada_key, SESSION) as mcp:
        refused = await mcp.call_tool("my_items", {})
        assert refused.is_error
        text = text_of(refused)
        assert "Connect Corp" in text and "call the tool again" in text
        link = text.split("again: ")[1].strip()
        assert link.startswith(f"{live.url}/connections/connect/")
        # The person follows the link in their browser, then calls again.
        await ada.connect(link)
        after = await mcp.call_tool("my_items", {})
        assert "Ada's private note" in text_of(after)


async def test_someone_else_opening_a_person_s_link_connects_nothing(
    live, world, oidc_provider, chromium
):
    async with client(live, world.server.slug, world.ada_key, SESSION) as mcp:
        link = text_of(await mcp.call_tool("my_items", {})).split("again: ")[1].strip()
    bob = await person_of(chromium, live, oidc_provider, world.bob, world.bob_upstream)
    page = bob.page
    await page.goto(link)
    await page.fill("input[name=username]", world.bob.email)
    await page.fill("input[name=password]", PASSWORD)
    async with page.expect_navigation(url=lambda u: "/login/" not in u):
        await page.click("button[type=submit]")
    assert "made for someone else" in await page.inner_text("h1")
    assert not await page.locator("[data-connect-continue]").count()


async def test_a_service_account_is_told_the_tool_acts_as_a_person(live, world):
    async with client(live, world.server.slug, world.robot_key, STATELESS) as mcp:
        result = await mcp.call_tool("my_items", {})
    assert result.is_error
    assert "service account" in text_of(result)


async def test_two_web_processes_refreshing_at_once_make_one_refresh(
    live, live_database, world, oidc_provider, chromium
):
    from django.utils import timezone

    from tests.conftest import LiveServer

    # A client whose tokens live an hour: the only refresh is the one this test forces.
    steady = oidc_provider.add_client(redirect_uris=[f"{live.url}/connections/callback/"])

    def use_steady_client():
        world.provider.client_id = steady.client_id
        world.provider.set_client_secret(steady.client_secret)
        world.provider.save()

    await asyncio.to_thread(use_steady_client)
    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    async with client(live, world.server.slug, world.ada_key, STATELESS, ada) as mcp:
        assert "Ada's private note" in text_of(await mcp.call_tool("my_items", {}))
    other = await asyncio.to_thread(LiveServer, live_database)
    try:
        await asyncio.to_thread(
            lambda: Connection.objects.filter(provider=world.provider, user=world.ada).update(
                expires_at=timezone.now()
            )
        )
        assert oidc_provider.grants(steady).get("refresh_token", 0) == 0
        async with (
            client(live, world.server.slug, world.ada_key, STATELESS) as first,
            client(other, world.server.slug, world.ada_key, STATELESS) as second,
        ):
            results = await asyncio.gather(
                *(c.call_tool("my_items", {}) for c in (first, second) for _ in range(4))
            )
        assert all("Ada's private note" in text_of(r) for r in results)
        assert oidc_provider.grants(steady)["refresh_token"] == 1
    finally:
        await asyncio.to_thread(other.stop)


async def test_removal_from_the_organization_revokes_the_person_s_connections_upstream_too(
    live, world, oidc_provider, chromium
):
    import httpx2

    from accounts import services
    from accounts.models import Membership
    from audit.models import AuditEvent

    bob = await person_of(chromium, live, oidc_provider, world.bob, world.bob_upstream)
    async with client(live, world.server.slug, world.bob_key, STATELESS, bob) as mcp:
        assert "Bob's private note" in text_of(await mcp.call_tool("my_items", {}))
    connection = await asyncio.to_thread(
        lambda: Connection.objects.get(provider=world.provider, user=world.bob)
    )
    refresh_token = connection.refresh_token()

    def remove():
        membership = Membership.objects.get(user=world.bob, organization=world.org)
        services.membership_remove(actor=world.ada, membership=membership)

    await asyncio.to_thread(remove)
    assert not await asyncio.to_thread(lambda: Connection.objects.filter(user=world.bob).exists())
    assert await asyncio.to_thread(
        lambda: AuditEvent.objects.filter(
            organization_id=world.org.pk, action="connection.revoke", target_id=str(connection.pk)
        ).exists()
    )
    # The provider was told: the refresh token it issued no longer works.
    refused = httpx2.post(
        f"{oidc_provider.issuer}/token",
        data={"grant_type": "refresh_token", "refresh_token": refresh_token},
        auth=(world.client.client_id, world.client.client_secret),
    )
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
