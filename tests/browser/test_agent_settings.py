"""The agent settings in a real browser: the server settings page shows discovery, the output
budget and the long-call wait with their defaults and saves them; the tool form pins a tool and
gives it a budget of its own."""

import re

from playwright.sync_api import expect

from .test_dashboard_flow import add_tool, sign_up


def test_the_settings_page_shows_and_saves_the_agent_settings(new_page, shoot, db_call, unique):
    from servers.models import Server, Tool

    page = new_page()
    slug = f"agents-{unique}"
    sign_up(page, f"agents-{unique}@example.com")
    page.goto("/servers/new/")
    page.fill("#id_name", "Agents")
    page.fill("#id_slug", slug)
    page.click("button:has-text('Create server')")
    expect(page).to_have_url(re.compile(rf"/servers/{slug}/$"))

    page.goto(f"/servers/{slug}/settings/")
    section = page.locator("#agent-settings")
    expect(section).to_contain_text("For agents")
    expect(page.locator("#id_discovery_mode")).to_have_value("auto")
    expect(page.locator("#id_discovery_threshold")).to_have_value("40")
    expect(page.locator("#id_budget_max_tokens")).to_have_value("25000")
    expect(page.locator("#id_budget_ttl_seconds")).to_have_value("3600")
    expect(page.locator("#id_long_wait_seconds")).to_have_value("50")

    page.select_option("#id_discovery_mode", "on")
    page.fill("#id_discovery_threshold", "10")
    page.fill("#id_budget_max_chars", "5000")
    page.fill("#id_budget_max_tokens", "1000")
    page.fill("#id_budget_ttl_seconds", "900")
    page.fill("#id_long_wait_seconds", "20")
    shoot(page, "agents-01-settings")
    page.click("button:has-text('Save settings')")
    expect(page.locator("#main")).to_contain_text("Settings saved.")
    page.reload()
    expect(page.locator("#id_discovery_mode")).to_have_value("on")
    expect(page.locator("#id_discovery_threshold")).to_have_value("10")
    expect(page.locator("#id_budget_max_chars")).to_have_value("5000")
    expect(page.locator("#id_long_wait_seconds")).to_have_value("20")
    agents = db_call(lambda: Server.objects.get(slug=slug).agents)
    assert agents == {
        "discovery": {"mode": "on", "threshold": 10},
        "outputBudget": {"maxChars": 5000, "maxTokens": 1000, "ttlSeconds": 900},
        "longCalls": {"waitSeconds": 20},
    }

    page.fill("#id_long_wait_seconds", "-1")
    page.click("button:has-text('Save settings')")
    expect(page.locator("#id_long_wait_seconds_errors")).to_be_visible()

    add_tool(page, slug, "echo", "static", "Echo a message back.")
    page.check("#id_pinned")
    page.fill("#id_budget_max_chars", "3000")
    page.click("button:has-text('Create tool')")
    expect(page.locator(".part", has_text="echo")).to_be_visible()
    tool = db_call(lambda: Tool.objects.get(server__slug=slug, name="echo"))
    assert tool.pinned and tool.output_budget == {"maxChars": 3000}
    page.goto(f"/servers/{slug}/tools/{tool.pk}/")
    expect(page.locator("#id_pinned")).to_be_checked()
    expect(page.locator("#id_budget_max_chars")).to_have_value("3000")
    assert not page.errors
