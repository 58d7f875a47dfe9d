"""The Audit log page in a real browser: what a person just did in the dashboard is there with
their name and address, filters narrow it, and the CSV downloads the same rows."""

import csv
import io
import re
from pathlib import Path

from playwright.sync_api import expect

from .test_dashboard_flow import sign_up


def test_the_audit_log_shows_filters_and_exports_what_was_just_done(new_page, shoot, unique):
    page = new_page()
    email = f"audit-{unique}@example.com"
    sign_up(page, email)
    slug = f"audited-{unique}"[:60]
    page.goto("/servers/new/")
    page.fill("#id_slug", slug)
    page.fill("#id_name", "Audited")
    page.click("button:has-text('Create server')")
    expect(page).to_have_url(re.compile(rf"/servers/{slug}/"))

    page.get_by_role("link", name="Audit log").click()
    expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    created = page.locator('tr[data-audit-row="server.create"]')
    expect(created).to_contain_text(slug)
    expect(created).to_contain_text(email)
    expect(created).to_contain_text("127.0.0.1")
    created.locator("summary").click()
    expect(created.locator("pre")).to_contain_text(slug)
    shoot(page, "90-audit-log")

    page.select_option("#f-action", "server.create")
    page.click("button:has-text('Filter')")
    expect(page.locator("tr[data-audit-row]")).to_have_count(1)

    with page.expect_download() as download:
        page.click("[data-audit-csv]")
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert [r["action"] for r in rows] == ["server.create"]
    assert rows[0]["target_label"] == slug
    assert not page.errors
