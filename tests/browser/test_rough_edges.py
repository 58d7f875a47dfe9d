"""The rough edges a new user hit, fixed and seen in a real browser: one playground key however
often the playground is opened, a new tool that starts static, the title in the breadcrumb,
the organization named as at sign-up, "Log in instead." as a link, "just now" for a key used
seconds ago, and no horizontal overflow at 390 px."""

import re

from playwright.sync_api import expect

from accounts.models import ApiKey, User
from servers.definition import import_definition

from .test_dashboard_flow import PASSWORD, sign_up

PHONE = {"width": 390, "height": 844}


def definition(slug):
    return {
        "slug": slug,
        "name": "wx",
        "title": "Weather for humans",
        "tools": [
            {
                "name": "echo",
                "description": "Echo.",
                "inputSchema": {"type": "object", "properties": {"m": {"type": "string"}}},
                "config": {"content": [{"type": "text", "text": "{{ m }}"}]},
            }
        ],
        "resources": [{"uri": "note://a", "name": "a", "text": "A"}],
        "resourceTemplates": [
            {"uriTemplate": "note://{id}", "name": "t1", "text": "T"},
            {"uriTemplate": "memo://{id}", "name": "t2", "text": "T"},
        ],
    }


def no_horizontal_overflow(page) -> bool:
    return page.evaluate(
        "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )


def buttons_sticking_out(page) -> list[str]:
    """Buttons whose box leaves their card or the viewport (a card clips them out of sight,
    so the page itself need not scroll for a button to be cut off)."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll("#main .btn")).filter((b) => {
            const r = b.getBoundingClientRect();
            if (!r.width) return false;
            const card = b.closest(".card");
            const limit = card ? card.getBoundingClientRect().right : window.innerWidth;
            return r.left < 0 || r.right > Math.min(limit, window.innerWidth) + 0.5;
        }).map((b) => b.textContent.trim())"""
    )


def test_the_rough_edges_of_the_first_hour(new_page, shoot, db_call, unique):
    page = new_page()
    email = f"edges-{unique}@example.com"
    slug = f"wx-{unique}"
    sign_up(page, email)  # as "Grace"
    expect(page.locator("#org-select option:checked")).to_have_text("Grace's organization")

    db_call(
        lambda: import_definition(
            definition(slug), User.objects.get(email=email).organizations().get()
        )
    )

    # The breadcrumb and the heading both say the title; templates are not counted as resources.
    page.goto(f"/servers/{slug}/")
    expect(page.locator("nav.crumbs")).to_have_text("Servers / Weather for humans")
    expect(page.locator("h1")).to_contain_text("Weather for humans")
    stats = page.locator(".stat")
    expect(stats.filter(has_text=re.compile(r"^Resources"))).to_contain_text("1")
    expect(stats.filter(has_text="Resource templates")).to_contain_text("2")

    # A new tool starts as a static tool, as the empty state says; kinds have proper names.
    page.goto(f"/servers/{slug}/tools/new/")
    expect(page.locator("#id_kind option:checked")).to_have_text("Static")
    expect(page.locator("#id_kind option[value=http]")).to_have_text("HTTP")
    expect(page.locator("nav.crumbs")).to_contain_text("Weather for humans")

    # Three visits to the playground, one key.
    for _ in range(3):
        page.goto(f"/servers/{slug}/playground/")
        expect(page.locator("#pg-status")).to_have_text(re.compile("Connected to Weather"))
    keys = db_call(lambda: list(ApiKey.objects.filter(created_by__email=email)))
    assert len(keys) == 1 and keys[0].revoked_at is None
    # The key was used seconds ago: "just now", not "0 minutes ago".
    db_call(lambda: ApiKey.objects.filter(pk=keys[0].pk).update(last_used_at=keys[0].created_at))
    page.goto("/keys/")
    expect(page.locator("#main")).to_contain_text("just now")
    expect(page.locator("#main")).not_to_contain_text("0 minutes")
    expect(page.locator("table tbody tr")).to_have_count(1)
    shoot(page, "50-keys-one-playground-key")

    # 390 px: the server page (with "Import from OpenAPI or Postman") does not overflow.
    page.set_viewport_size(PHONE)
    for path in (f"/servers/{slug}/", f"/servers/{slug}/tasks/", "/tokens/", "/keys/"):
        page.goto(path)
        assert no_horizontal_overflow(page), path
        assert buttons_sticking_out(page) == [], path
    page.goto(f"/servers/{slug}/")
    expect(page.get_by_role("link", name="Import from OpenAPI or Postman")).to_be_visible()
    assert buttons_sticking_out(page) == []
    shoot(page, "51-server-at-390px")

    # Signing up again with the same address offers a link to log in.
    other = new_page()
    other.goto("/signup/")
    other.fill("#id_email", email)
    other.fill("#id_password", PASSWORD)
    other.click("button[type=submit]")
    link = other.get_by_role("link", name="Log in instead.")
    expect(link).to_be_visible()
    link.click()
    expect(other).to_have_url(re.compile(r"/login/$"))
    assert not page.errors
