"""A server of 172 tools in Chromium, as an OpenAPI import leaves it (every tool disabled): the
server page pages them, searches and filters them, enables every filtered tool at once,
disables a page's selection, and deletes two after asking. At 1280 and 390 px, light and dark,
with no sideways scrolling. Screenshots: test-artifacts/screenshots/big-*.png."""

import re

from playwright.sync_api import expect

from accounts.models import User
from servers.definition import import_definition
from servers.models import Server

from .looks import SCHEMES, WIDTHS, check_fits, context_for, shoot
from .test_dashboard_flow import sign_up

RESOURCES = ("users", "teams", "invoices", "projects")
VERBS = ("list", "get", "create", "update", "delete", "suspend")


def definition(slug):
    tools = []
    for i in range(172):
        resource, verb = RESOURCES[i % 4], VERBS[i % 6]
        tools.append(
            {
                "name": f"{verb}_{resource}_{i}",
                "description": f"{verb.capitalize()} {resource} (operation {i} of the API).",
                "inputSchema": {"type": "object", "properties": {}},
                "kind": "workflow" if i % 10 == 0 else "static",
                "config": (
                    {"steps": [{"return": {"content": [{"type": "text", "text": "ok"}]}}]}
                    if i % 10 == 0
                    else {"content": [{"type": "text", "text": "ok"}]}
                ),
                "enabled": False,
            }
        )
    return {"slug": slug, "name": "big-api", "title": "Big API", "tools": tools}


def enabled_count(slug):
    return Server.objects.get(slug=slug).tools.filter(enabled=True).count()


def test_a_172_tool_server_is_searched_filtered_paged_and_changed_in_bulk(
    new_page, browser, dashboard_server, db_call, unique
):
    page = new_page()
    email = f"big-{unique}@example.com"
    slug = f"big-{unique}"
    sign_up(page, email)
    db_call(
        lambda: import_definition(
            definition(slug), User.objects.get(email=email).organizations().get()
        )
    )

    page.goto(f"/servers/{slug}/")
    expect(page.locator("[data-tool-count]")).to_have_text("172 tools; showing 1–50.")
    expect(page.locator("[data-tool]")).to_have_count(50)
    page.get_by_role("link", name="Next").click()
    expect(page.locator(".tool-pager")).to_contain_text("Page 2 of 4")
    expect(page.locator("[data-tool]").first).to_have_attribute("data-tool", "create_invoices_50")

    # Search and filter: the disabled "users" tools.
    page.fill("#tool-q", "users")
    page.select_option("#tool-state", "disabled")
    page.click(".tool-filter button[type=submit]")
    expect(page).to_have_url(re.compile(r"q=users&state=disabled"))
    expect(page.locator("[data-tool-count]")).to_have_text("43 of 172 tools match.")
    expect(page.locator("[data-tool]")).to_have_count(43)
    shoot(page, "big-filtered-1280-light")

    # Enable every filtered tool at once.
    page.select_option("#bulk-scope", "matching")
    expect(page.locator("#bulk-scope option:checked")).to_have_text("All 43 matching tools")
    page.get_by_role("button", name="Enable", exact=True).click()
    expect(page.locator(".messages")).to_contain_text("Enabled 43 tools.")
    assert db_call(enabled_count, slug) == 43
    # Still filtered on disabled ones: none of the users tools is left.
    expect(page.locator("[data-tool-count]")).to_have_text("0 of 172 tools match.")

    # The kind filter, then a page's selection disabled.
    page.goto(f"/servers/{slug}/?state=enabled&kind=workflow")
    expect(page.locator("[data-tool]")).to_have_count(9)  # the users tools 0, 20, ... 160
    page.check("[data-bulk-all]")
    expect(page.locator("[data-bulk-id]:checked")).to_have_count(9)
    page.get_by_role("button", name="Disable", exact=True).click()
    expect(page.locator(".messages")).to_contain_text("Disabled 9 tools.")
    assert db_call(enabled_count, slug) == 34

    # Deleting two asks first, naming them.
    page.goto(f"/servers/{slug}/?q=delete_users")
    page.locator("[data-bulk-id]").nth(0).check()
    page.locator("[data-bulk-id]").nth(1).check()
    page.get_by_role("button", name="Delete…").click()
    expect(page.get_by_role("heading", name="Delete 2 tools?")).to_be_visible()
    expect(page.locator("[data-bulk-names]")).to_contain_text("delete_users_4")
    shoot(page, "big-delete-confirm-1280-light")
    page.get_by_role("button", name="Delete 2 tools").click()
    expect(page.locator(".messages")).to_contain_text("Deleted 2 tools.")
    assert db_call(lambda: Server.objects.get(slug=slug).tools.count()) == 170
    assert not page.errors, page.errors

    # The page at both widths, light and dark.
    state = page.context.storage_state()
    problems = []
    for width in WIDTHS:
        for scheme in SCHEMES:
            context = context_for(browser, dashboard_server.url, width, scheme, state)
            look = context.new_page()
            look.goto(f"/servers/{slug}/?q=users")
            expect(look.locator("[data-tool]").first).to_be_visible()
            problems += check_fits(look, f"big {width} {scheme}", width)
            shoot(look, f"big-server-{width}-{scheme}")
            context.close()
    assert not problems, "\n".join(problems)
