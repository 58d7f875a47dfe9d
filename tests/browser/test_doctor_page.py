"""The Doctor tab in Chromium: a member runs the doctor and reads the report, step by step,
with a fix for what fails."""

import pytest
from playwright.sync_api import expect

from accounts.models import User
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition

from .conftest import track_errors
from .test_dashboard_flow import sign_up


@pytest.fixture(scope="module")
def doctor_site(live_database):
    """A live server that is its own SITE_URL, with the dashboard's CSP, whose doctor may call
    it on loopback (the explicit setting)."""
    from tests.conftest import LiveServer

    server = LiveServer(
        live_database,
        own_site_url=True,
        extra_env={
            "DJANGO_SETTINGS_MODULE": "tests.browser.csp_settings",
            "DOCTOR_ALLOW_PRIVATE_SITE": "1",
            "DOCTOR_SSE_WAIT_SECONDS": "3",
        },
    )
    yield server
    server.stop()


def test_a_member_runs_the_doctor_and_reads_the_report(browser, doctor_site, db_call, unique):
    context = browser.new_context(base_url=doctor_site.url, viewport={"width": 1360, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    track_errors(page)
    email = f"doc-page-{unique}@example.com"
    slug = f"doc-page-{unique}"
    sign_up(page, email)
    db_call(
        lambda: import_definition(
            server_definition(slug), User.objects.get(email=email).personal_organization()
        )
    )

    page.goto(f"/servers/{slug}/")
    page.click("nav.tabs >> text=Doctor")
    expect(page).to_have_url(f"{doctor_site.url}/servers/{slug}/doctor/")
    page.fill("input[name=key]", "gmcp_not_a_real_key_1")
    page.click("button:has-text('Run the doctor')")

    report = page.locator("[data-doctor-report]")
    expect(report).to_be_visible()
    expect(report).to_have_attribute("data-healthy", "no")
    initialize = report.locator("[data-step='initialize']")
    expect(initialize).to_have_attribute("data-status", "fail")
    expect(initialize.locator("[data-fix]")).to_contain_text("Connect page")
    # The pasted key never comes back into the page.
    assert "gmcp_not_a_real_key_1" not in page.content()

    # Without a key, the doctor's own temporary key: every client step passes.
    page.click("button:has-text('Run the doctor')")
    expect(report).to_have_attribute("data-healthy", "yes")
    for step in ("initialize", "revision negotiation", "tools/list", "ping", "SSE streaming"):
        expect(report.locator(f"[data-step='{step}']")).to_have_attribute("data-status", "pass")
    report.locator("[data-step='tools/list'] summary").click()
    expect(report.locator("[data-step='tools/list'] pre").first).to_contain_text("tools/list")
    assert page.errors == []
    context.close()
