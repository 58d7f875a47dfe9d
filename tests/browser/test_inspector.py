"""The live inspector in a real browser against live uvicorn processes on one Postgres and one
Redis: a call made with the official Python SDK shows in the open inspector within a second
(client, method, tool, redacted arguments), filters and pause work, a revoked key's request
shows with its reason, a member of another organization can neither open the page nor the
socket, and requests served by a second web process show too."""

import asyncio
import re
import time
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation
from playwright.sync_api import expect

from accounts.models import ApiKey, User
from oauth.metadata import resource_uri
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition

from .test_dashboard_flow import sign_up


def sdk_call(url: str, raw: str, message: str) -> str:
    """One session with the official SDK, in its own thread and loop (Playwright holds this
    thread's): initialize, then tools/call echo. Returns the tool's text."""

    async def run():
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {raw}"})
        info = Implementation(name="inspector-sdk-test", version="9.9")
        async with Client(streamable_http_client(url, http_client=http), client_info=info) as c:
            result = await c.call_tool("echo", {"message": message})
            return result.content[0].text

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, run()).result(timeout=60)


@pytest.fixture
def watched(new_page, db_call, unique):
    """A signed-up owner with a server and a key, on the server's open inspector."""
    page = new_page()
    email = f"inspect-{unique}@example.com"
    slug = f"watched-{unique}"
    sign_up(page, email)

    def make():
        org = User.objects.get(email=email).organizations().get()
        import_definition(server_definition(slug), org)
        return ApiKey.issue(org, "sdk key")

    key, raw = db_call(make)
    page.goto(f"/servers/{slug}/inspector/")
    expect(page.locator("#inspector-state")).to_have_text("Live")
    return page, slug, key, raw


def test_an_sdk_call_appears_in_the_open_inspector_within_a_second(
    watched, dashboard_server, shoot
):
    page, slug, _key, raw = watched
    assert sdk_call(dashboard_server.mcp_url(slug), raw, "seen live") == "You said seen live"
    answered = time.monotonic()
    row = page.locator("#inspector-rows tbody tr", has_text="tools/call echo")
    expect(row).to_be_visible(timeout=1000)
    assert time.monotonic() - answered < 1.0
    expect(row).to_contain_text("inspector-sdk-test 9.9")
    expect(row).to_contain_text("200 ok")
    row.click()
    expect(page.locator("#detail-request")).to_contain_text('"message": "[redacted]"')
    expect(page.locator("#detail-request")).to_contain_text('"authorization": "Bearer ***"')
    expect(page.locator("#detail-response")).to_contain_text("You said seen live")
    assert raw not in page.content()
    shoot(page, "inspector-live-call")

    # Filters hide rows without losing them.
    page.fill("#f-method", "initialize")
    expect(row).to_be_hidden()
    page.fill("#f-method", "")
    page.select_option("#f-status", "refused")
    expect(row).to_be_hidden()
    page.select_option("#f-status", "")
    expect(row).to_be_visible()

    # Paused: new requests are not shown; resumed: they are again.
    calls = page.locator("#inspector-rows tbody tr", has_text="tools/call echo")
    page.click("#inspector-pause")
    expect(page.locator("#inspector-pause")).to_have_text("Resume")
    page.wait_for_timeout(300)
    sdk_call(dashboard_server.mcp_url(slug), raw, "while paused")
    page.wait_for_timeout(1000)
    expect(calls).to_have_count(1)
    page.click("#inspector-pause")
    page.wait_for_timeout(300)
    sdk_call(dashboard_server.mcp_url(slug), raw, "resumed")
    expect(calls).to_have_count(2, timeout=2000)
    assert page.errors == []


def test_a_request_with_a_revoked_key_appears_with_its_reason(watched, dashboard_server, db_call):
    page, slug, key, raw = watched
    db_call(key.revoke)
    answer = httpx2.post(
        dashboard_server.mcp_url(slug),
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"authorization": f"Bearer {raw}", "accept": "application/json"},
        timeout=10,
    )
    assert answer.status_code == 403  # an unusable API key: 403, no OAuth challenge
    row = page.locator("#inspector-rows tbody tr", has_text="API key or access token revoked")
    expect(row).to_be_visible(timeout=2000)
    expect(row).to_contain_text("403 refused")
    page.select_option("#f-status", "refused")
    expect(row).to_be_visible()


def test_a_member_of_another_organization_can_neither_open_the_page_nor_the_socket(
    watched, new_page, unique
):
    _page, slug, _key, _raw = watched
    other = new_page()
    sign_up(other, f"other-{unique}@example.net")
    answer = other.goto(f"/servers/{slug}/inspector/")
    assert answer.status == 404
    other.goto("/servers/")
    # The handshake itself is refused (HTTP 403): the socket never opens, nothing arrives.
    seen = other.evaluate(
        """slug => new Promise(done => {
            const seen = [];
            const socket = new WebSocket(`ws://${location.host}/ws/inspector/${slug}/`);
            socket.onopen = () => seen.push("open");
            socket.onmessage = () => seen.push("message");
            socket.onclose = () => { seen.push("closed"); done(seen); };
        })""",
        slug,
    )
    assert seen == ["closed"]


@pytest.fixture
def second_process(live_database):
    from tests.conftest import LiveServer

    server = LiveServer(
        live_database, extra_env={"DJANGO_SETTINGS_MODULE": "tests.browser.csp_settings"}
    )
    yield server
    server.stop()


def test_requests_served_by_another_web_process_appear_too(
    watched, dashboard_server, second_process
):
    page, slug, _key, raw = watched
    assert sdk_call(dashboard_server.mcp_url(slug), raw, "first") == "You said first"
    assert sdk_call(second_process.mcp_url(slug), raw, "second") == "You said second"
    calls = page.locator("#inspector-rows tbody tr", has_text="tools/call echo")
    expect(calls).to_have_count(2, timeout=2000)
    processes = {calls.nth(i).get_attribute("data-process") for i in range(2)}
    assert len(processes) == 2
    assert all(re.fullmatch(r".+:\d+", p) for p in processes)


def test_a_stream_shows_when_it_opens_and_the_same_row_closes_when_it_ends(
    watched, dashboard_server
):
    page, slug, _key, raw = watched
    url = dashboard_server.mcp_url(slug)
    with httpx2.Client(timeout=30) as http:
        opened = http.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "stream-watcher", "version": "1"},
                },
            },
            headers={"authorization": f"Bearer {raw}", "accept": "application/json"},
        )
        headers = {
            "authorization": f"Bearer {raw}",
            "accept": "text/event-stream",
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        with http.stream("GET", url, headers=headers) as stream:
            assert stream.status_code == 200
            row = page.locator("#inspector-rows tbody tr", has_text="GET stream")
            expect(row).to_contain_text("200 streaming", timeout=2000)
            expect(row).to_contain_text("stream-watcher 1")
            expect(row).to_contain_text("opened in")
    expect(row).to_contain_text("200 closed", timeout=10_000)
    expect(row).to_contain_text("open for")
    expect(page.locator("#inspector-rows tbody tr", has_text="GET stream")).to_have_count(1)


def test_an_oauth_request_naming_the_server_appears_with_its_reason(watched, dashboard_server):
    page, slug, _key, _raw = watched
    refused = httpx2.post(
        dashboard_server.url + "/oauth/token",
        data={
            "grant_type": "authorization_code",
            "client_id": "no-such-client",
            "code": "gmcp-code-that-must-not-show",
            "code_verifier": "a-verifier-that-must-not-show",
            # The server's canonical resource URI (this deployment's SITE_URL): only requests
            # naming it reach its inspector (inspector/oauth_watch.py).
            "resource": resource_uri(slug),
        },
        timeout=10,
    )
    assert refused.status_code == 401
    row = page.locator("#inspector-rows tbody tr", has_text="oauth/token")
    expect(row).to_contain_text("401 refused", timeout=2000)
    expect(row).to_contain_text("OAuth client unknown or its authentication failed")
    expect(row).to_contain_text("Unknown client_id")
    row.click()
    expect(page.locator("#detail-request")).to_contain_text('"code_verifier": "[redacted]"')
    assert "must-not-show" not in page.content()
