"""The key-created page in Chromium: besides the key, ready-to-copy snippets carrying it (curl,
`claude mcp add`, a JSON config) for the server the key opens; the JSON config's header really
opens the server; the page fits 1280 and 390 px in light and dark. Screenshots:
test-artifacts/screenshots/key-created-<width>-<scheme>.png."""

import json

import httpx2
from playwright.sync_api import expect

from accounts.models import User
from servers.definition import import_definition

from .looks import SCHEMES, WIDTHS, check_fits, context_for, shoot
from .test_dashboard_flow import sign_up
from .test_rough_edges import definition

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "snippet", "version": "1"},
    },
}


def test_the_new_key_comes_with_snippets_that_use_it(
    new_page, browser, dashboard_server, db_call, unique
):
    page = new_page()
    email = f"keysnip-{unique}@example.com"
    slug = f"snip-{unique}"
    sign_up(page, email)
    db_call(
        lambda: import_definition(
            definition(slug), User.objects.get(email=email).organizations().get()
        )
    )
    state = page.context.storage_state()

    for width in WIDTHS:
        for scheme in SCHEMES:
            context = context_for(browser, dashboard_server.url, width, scheme, state)
            look = context.new_page()
            look.goto("/keys/new/")
            look.fill("#id_name", f"laptop {width} {scheme}")
            look.get_by_label(slug).check()
            look.click("button:has-text('Create key')")
            raw = look.locator("[data-raw-key]").input_value()
            assert raw.startswith("gmcp_")

            curl = look.locator("[data-key-snippet=curl] code").inner_text()
            assert curl.startswith("curl -i ") and f"Authorization: Bearer {raw}" in curl
            assert f"/mcp/{slug}" in curl
            claude = look.locator("[data-key-snippet=claude-code] code").inner_text()
            assert claude.startswith(f"claude mcp add --transport http {slug} ")
            assert f'--header "Authorization: Bearer {raw}"' in claude
            config = json.loads(look.locator("[data-key-snippet=cursor] code").inner_text())
            entry = config["mcpServers"][slug]
            assert entry["url"].endswith(f"/mcp/{slug}")
            expect(look.get_by_role("button", name="Copy")).to_have_count(4)  # key + 3 snippets

            problems = check_fits(look, f"key-created {width} {scheme}", width)
            assert not problems, problems
            shoot(look, f"key-created-{width}-{scheme}")
            context.close()

    # The config's header opens the server (the live server's address stands in for SITE_URL).
    answer = httpx2.post(
        dashboard_server.mcp_url(slug),
        json=INITIALIZE,
        headers={**entry["headers"], "Accept": "application/json, text/event-stream"},
    )
    assert answer.status_code == 200, answer.text
    assert "serverInfo" in answer.text
