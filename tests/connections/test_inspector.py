"""The live inspector shows the URL elicitation a connection-backed tool sends on its first call
(2025-11-25: on the call's stream; 2026-07-28: in its `input_required` result): the row of the
call says the client was asked to open getmcp's connect link, the detail shows the request, and
no event the page holds carries the person's token at the provider."""

import asyncio

import pytest
from django.test import Client as DjangoClient
from playwright.async_api import expect

from connections.models import Connection
from tests.connections.conftest import SESSION, STATELESS, client, person_of, text_of

pytestmark = pytest.mark.django_db(transaction=True)


def session_cookie(committed, user) -> str:
    def make():
        browser = DjangoClient()
        browser.force_login(user)
        return browser.cookies["sessionid"].value

    return committed(make)


@pytest.mark.parametrize("mode", [SESSION, STATELESS])
async def test_the_inspector_shows_the_link_a_connection_asks_the_client_to_open_and_no_token(
    live, world, oidc_provider, chromium, committed, mode
):
    cookie = await asyncio.to_thread(session_cookie, committed, world.ada)
    watcher = await chromium.new_context()
    await watcher.add_cookies([{"name": "sessionid", "value": cookie, "url": live.url}])
    page = await watcher.new_page()
    await page.goto(f"{live.url}/servers/{world.server.slug}/inspector/")
    await expect(page.locator("#inspector-state")).to_have_text("Live")

    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    async with client(live, world.server.slug, world.ada_key, mode, ada) as mcp:
        assert "Ada's private note" in text_of(await mcp.call_tool("my_items", {}))
    link = ada.asked[0].url

    asked = page.locator("#inspector-rows [data-asked='elicitation/create']")
    await expect(asked).to_have_count(1)
    await expect(asked).to_contain_text(f"asked the client to open {link}")
    await expect(asked).to_contain_text("Connect Corp")
    row = page.locator("#inspector-rows tbody tr", has=page.locator("[data-asked]"))
    await expect(row).to_contain_text("tools/call my_items")
    await row.click()
    await expect(page.locator("#detail-response")).to_contain_text('"mode": "url"')
    await expect(page.locator("#detail-response")).to_contain_text(ada.asked[0].elicitation_id)

    token = await asyncio.to_thread(
        lambda: Connection.objects.get(provider=world.provider, user=world.ada).access_token()
    )
    # Every call's detail, the answered one's too: the token the tool used is in none.
    rows = page.locator("#inspector-rows tbody tr")
    await expect(rows.filter(has_text="200 ok").filter(has_text="my_items")).not_to_have_count(0)
    for index in range(await rows.count()):
        await rows.nth(index).click()
        assert token not in await page.content()
    await watcher.close()
