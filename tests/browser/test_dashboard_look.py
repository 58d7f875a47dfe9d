"""The dashboard's look in Chromium: every main page at 1280 and 390 px, light and dark (the
system's setting), with no sideways scrolling, no hidden tabs or cut-off tables at 1280 px and
no column squeezed into a tall strip at 390 px; dark mode really changes the colours; the
command palette finds the organization's servers and tools and nothing of another's.
Screenshots: test-artifacts/screenshots/look-<page>-<width>-<scheme>.png."""

import re

import httpx2
import pytest
from playwright.sync_api import expect

from accounts.models import ApiKey, User
from activity.drain import drain_call_log
from activity.models import CallLog
from servers import publishing
from servers.definition import import_definition
from tests.waiting import wait_until

from .looks import SCHEMES, WIDTHS, check_fits, context_for, shoot
from .test_dashboard_flow import sign_up
from .test_inspector import sdk_call

LONG = "Looks up the weather of a city for the next days, with wind, rain and a summary. " * 3


def definition(slug):
    tool = {
        "description": LONG,
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
        "config": {"content": [{"type": "text", "text": "Sunny in {{ city }}"}]},
    }
    return {
        "slug": slug,
        "name": "weather-desk",
        "title": "Weather desk for the whole team",
        "instructions": "Use forecast_for_the_next_seven_days_with_hourly_detail for plans.",
        "tools": [
            {"name": "forecast_for_the_next_seven_days_with_hourly_detail", **tool},
            {"name": "current_conditions", **tool, "enabled": False},
            {
                "name": "echo",
                "description": "Echo a message back.",
                "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
                "config": {"content": [{"type": "text", "text": "You said {{ message }}"}]},
            },
        ],
        "resources": [
            {"uri": "note://style-guide/for/every/forecast", "name": "guide", "text": "A"}
        ],
        "prompts": [
            {
                "name": "plan_a_picnic",
                "description": "Plan a picnic.",
                "messages": [{"role": "user", "content": {"type": "text", "text": "Plan it."}}],
            }
        ],
    }


@pytest.fixture
def owner(new_page, db_call, unique, dashboard_server):
    """A signed-up owner of a server with tools, a published version, a key, a secret and calls
    in the log (so the tables have rows); the browser state to reuse."""
    page = new_page()
    email = f"look-{unique}@example.com"
    slug = f"desk-{unique}"
    sign_up(page, email)

    def make():
        from vault.models import Secret

        org = User.objects.get(email=email).organizations().get()
        server = import_definition(definition(slug), org)
        publishing.publish(server)
        _, raw = ApiKey.issue(org, "a key with a rather long name for the laptop")
        Secret.objects.create(
            organization=org, name="WEATHER_API_TOKEN_FOR_PRODUCTION", ciphertext="x"
        )
        return server.tools.order_by("position").first().pk, raw

    tool_pk, raw = db_call(make)
    for n in range(3):
        assert sdk_call(dashboard_server.mcp_url(slug), raw, f"call {n}") == f"You said call {n}"

    def logged():
        drain_call_log()
        return CallLog.objects.filter(server_slug=slug).count() >= 3

    wait_until(lambda: db_call(logged), what="the calls in the log")
    return page.context.storage_state(), slug, tool_pk


def main_pages(slug, tool_pk):
    return {
        "servers": "/servers/",
        "server": f"/servers/{slug}/",
        "connect": f"/servers/{slug}/connect/",
        "playground": f"/servers/{slug}/playground/",
        "tasks": f"/servers/{slug}/tasks/",
        "versions": f"/servers/{slug}/versions/",
        "server-analytics": f"/servers/{slug}/analytics/",
        "server-settings": f"/servers/{slug}/settings/",
        "inspector": f"/servers/{slug}/inspector/",
        "tool-editor": f"/servers/{slug}/tools/{tool_pk}/",
        "keys": "/keys/",
        "secrets": "/secrets/",
        "calls": "/calls/",
        "analytics": "/analytics/",
        "usage": "/usage/",
        "members": "/organization/members/",
        "organization": "/organization/",
        "tokens": "/tokens/",
        "audit": "/organization/audit/",
        "sso": "/organization/sso/",
        "new-key": "/keys/new/",
    }


def test_every_main_page_fits_1280_and_390_px_in_light_and_dark(browser, dashboard_server, owner):
    state, slug, tool_pk = owner
    problems = []
    backgrounds = {}
    for width in WIDTHS:
        for scheme in SCHEMES:
            context = context_for(browser, dashboard_server.url, width, scheme, state)
            page = context.new_page()
            errors = []
            page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
            for name, path in main_pages(slug, tool_pk).items():
                response = page.goto(path)
                assert response.status == 200, (path, response.status)
                page.wait_for_load_state("load")
                problems += check_fits(page, f"{name} {width} {scheme}", width)
                shoot(page, f"look-{name}-{width}-{scheme}")
            backgrounds[scheme] = page.evaluate("getComputedStyle(document.body).backgroundColor")
            assert not errors, errors
            context.close()
    assert not problems, "\n".join(problems)
    # Dark mode is real: a dark background (every channel low), and not the light one.
    dark = [int(n) for n in re.findall(r"\d+", backgrounds["dark"])[:3]]
    assert max(dark) < 40 and backgrounds["dark"] != backgrounds["light"]


def test_the_server_tab_bar_shows_every_tab_at_1280_px(browser, dashboard_server, owner):
    state, slug, _ = owner
    context = context_for(browser, dashboard_server.url, "1280", "light", state)
    page = context.new_page()
    page.goto(f"/servers/{slug}/")
    bar = page.locator("nav.tabs").bounding_box()
    for tab in page.locator("nav.tabs a").all():
        box = tab.bounding_box()
        assert box["x"] >= bar["x"] and box["x"] + box["width"] <= bar["x"] + bar["width"] + 1, (
            tab.inner_text()
        )
    context.close()


def test_the_command_palette_finds_servers_and_tools_and_opens_them(
    browser, dashboard_server, owner
):
    state, slug, tool_pk = owner
    for width, scheme in (("1280", "light"), ("1280", "dark"), ("390", "light")):
        context = context_for(browser, dashboard_server.url, width, scheme, state)
        page = context.new_page()
        page.goto("/keys/")
        page.keyboard.press("Control+k")
        palette = page.locator("#palette")
        expect(palette).to_be_visible()
        expect(page.locator("#palette-input")).to_be_focused()
        page.keyboard.type("forecast")
        first = page.locator(".palette-item").first
        expect(first).to_contain_text("forecast_for_the_next_seven_days_with_hourly_detail")
        expect(first).to_have_attribute("aria-selected", "true")
        shoot(page, f"look-palette-{width}-{scheme}")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.keyboard.press("Enter")
        expect(page).to_have_url(re.compile(rf"/servers/{slug}/tools/{tool_pk}/$"))
        context.close()

    # "/" opens it too (outside a text field); a server and a page are found by name.
    context = context_for(browser, dashboard_server.url, "1280", "light", state)
    page = context.new_page()
    page.goto("/servers/")
    page.keyboard.press("/")
    page.keyboard.type("weather desk")
    expect(page.locator(".palette-item").first).to_contain_text("Weather desk for the whole team")
    page.fill("#palette-input", "secrets")
    expect(page.locator(".palette-item[data-kind=page]")).to_contain_text("Secrets")
    page.keyboard.press("Escape")
    expect(page.locator("#palette")).to_be_hidden()
    # Typing "/" in a field types it; it does not open the palette.
    page.goto(f"/servers/{slug}/")
    page.fill("#tool-q", "")
    page.locator("#tool-q").type("a/b")
    expect(page.locator("#tool-q")).to_have_value("a/b")
    expect(page.locator("#palette")).to_be_hidden()
    context.close()


def test_an_outsider_finds_nothing_of_another_organization_in_the_palette(new_page, owner, unique):
    page = new_page()
    sign_up(page, f"outsider-{unique}@example.com")
    page.keyboard.press("Control+k")
    page.keyboard.type("forecast")
    expect(page.locator("#palette-hint")).to_have_text(re.compile("Nothing matches"))
    expect(page.locator(".palette-item")).to_have_count(0)
    page.fill("#palette-input", "weather")
    expect(page.locator("#palette-hint")).to_have_text(re.compile("Nothing matches"))
    shoot(page, "look-palette-outsider")


def test_the_inspector_table_with_rows_fits_1280_px(browser, dashboard_server, owner):
    state, slug, _ = owner
    context = context_for(browser, dashboard_server.url, "1280", "light", state)
    page = context.new_page()
    page.goto(f"/servers/{slug}/inspector/")
    expect(page.locator("#inspector-state")).to_have_text("Live")
    # A refused request (its reason is a long sentence) and a browser-like User-Agent.
    agent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131"
    refused = httpx2.post(
        dashboard_server.mcp_url(slug),
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        headers={"Authorization": "Bearer gmcp_not_a_real_key", "User-Agent": agent},
    )
    assert refused.status_code == 403  # a key-shaped credential: 403 "Invalid API key"
    expect(page.locator("#inspector-rows tbody tr")).to_have_count(1)
    problems = check_fits(page, "inspector with rows 1280", "1280")
    shoot(page, "look-inspector-rows-1280-light")
    assert not problems, problems
    context.close()
