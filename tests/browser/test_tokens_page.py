"""Personal access tokens in a real browser: found from the sidebar, made once and shown once,
used against /api/, listed with its last use, revoked and then refused."""

import re

import httpx2
from playwright.sync_api import expect

from .test_dashboard_flow import sign_up


def test_a_token_made_in_the_dashboard_drives_the_api_until_revoked(
    new_page, shoot, dashboard_server, unique
):
    page = new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    sign_up(page, f"tokens-{unique}@example.com")

    page.get_by_role("link", name="Access tokens").click()
    expect(page.get_by_role("heading", name="No personal access tokens yet")).to_be_visible()
    expect(page.locator("#main a[href='/api/docs/']").first).to_be_visible()
    page.get_by_role("link", name="Create your first token").click()
    page.fill("#id_name", "CI deploy")
    page.select_option("#id_expires_in", "30")
    page.click("button:has-text('Create token')")
    raw = page.locator("#raw-token").input_value()
    assert re.fullmatch(r"gpat_[A-Za-z0-9_-]{40,}", raw)
    expect(page.locator("#token-curl")).to_contain_text(f"Authorization: Token {raw}")
    shoot(page, "60-token-created")

    api = f"{dashboard_server.url}/api/servers/"
    assert httpx2.get(api, headers={"Authorization": f"Token {raw}"}).status_code == 200

    page.goto("/tokens/")
    row = page.locator("table tbody tr", has_text="CI deploy")
    expect(row).to_contain_text("just now")
    expect(page.locator("#main")).not_to_contain_text(raw)
    shoot(page, "61-tokens-list")
    row.get_by_role("button", name=re.compile("Revoke")).click()
    expect(page.locator("#main")).to_contain_text("revoked")
    assert httpx2.get(api, headers={"Authorization": f"Token {raw}"}).status_code == 401
    assert not page.errors
