"""The path a new user takes, in a real browser: sign up, build a server with a static and a
workflow tool, make a key, call the tools from the playground (answering an elicitation), find
the call in the log, revoke the key and be refused, and an outsider kept out."""

import json
import re

from playwright.sync_api import expect

from activity.drain import drain_call_log

PASSWORD = "a long browser passphrase"
ECHO_SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string", "title": "Message", "maxLength": 100}},
    "required": ["message"],
}


def sign_up(page, email):
    page.goto("/signup/")
    page.fill("#id_name", "Grace")
    page.fill("#id_email", email)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(re.compile(r"/servers/$"))


def add_tool(page, slug, name, kind, description):
    page.goto(f"/servers/{slug}/tools/new/")
    page.fill("#id_name", name)
    page.fill("#id_description", description)
    page.fill("#id_input_schema", json.dumps(ECHO_SCHEMA, indent=2))
    # The preview is generated from the schema as it is typed.
    expect(page.locator("#schema-preview label", has_text="Message")).to_be_visible()
    expect(page.locator(".schema-status")).to_have_text(re.compile("Valid JSON Schema"))
    page.select_option("#id_kind", kind)
    # Choosing a kind fills in its starting config.
    expect(page.locator("#id_config")).not_to_have_value("")


def test_a_new_user_goes_from_sign_up_to_a_working_call(new_page, shoot, db_call, unique):
    page = new_page()
    email = f"grace-{unique}@example.com"
    slug = f"demo-{unique}"

    response = page.goto("/signup/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    sign_up(page, email)
    expect(page.get_by_role("heading", name="Create your first MCP server")).to_be_visible()
    shoot(page, "01-servers-empty")

    page.click("text=New server")
    page.fill("#id_name", "Demo")
    page.fill("#id_slug", slug)
    page.fill("#id_title", "Demo server")
    page.click("button:has-text('Create server')")
    expect(page).to_have_url(re.compile(rf"/servers/{slug}/$"))
    shoot(page, "02-server-new")

    # A schema error is shown as it is typed, before any submit.
    page.goto(f"/servers/{slug}/tools/new/")
    page.fill("#id_input_schema", '{"type": "object", "properties": {"a": {"type": 5}}}')
    expect(page.locator(".schema-status")).to_have_text(re.compile("properties.a"))
    page.fill("#id_input_schema", '{"type": ')
    expect(page.locator(".schema-status")).to_have_text(re.compile("Invalid JSON"))

    add_tool(page, slug, "echo", "static", "Echo a <b>message</b> back.")
    page.check("#id_read_only")
    shoot(page, "03-tool-editor")
    page.click("button:has-text('Create tool')")
    expect(page.locator(".part", has_text="echo")).to_be_visible()
    # What the user typed is shown as text, never as markup.
    expect(page.locator(".part-desc").first).to_have_text("Echo a <b>message</b> back.")

    add_tool(page, slug, "confirm_send", "workflow", "Asks before sending.")
    expect(page.locator("#id_config")).to_have_value(re.compile("elicit"))
    page.click("button:has-text('Create tool')")
    expect(page.locator(".part", has_text="confirm_send")).to_be_visible()
    shoot(page, "04-server-detail")

    page.click(".part:has-text('echo') a:has-text('Test')")
    page.get_by_label("Message").fill("a test run")
    page.click("#tr-run")
    expect(page.locator("#tr-result")).to_contain_text("You said: a test run")
    expect(page.locator("#tr-timing")).to_have_text(re.compile(r"ms"))
    shoot(page, "04b-tool-test")

    page.goto(f"/servers/{slug}/versions/")
    page.click("button:has-text('Publish')")
    expect(page.locator(".message-success")).to_contain_text("Published 1.0.0")
    shoot(page, "04c-versions")

    page.goto("/keys/new/")
    page.fill("#id_name", "Browser key")
    page.get_by_label(slug).check()
    page.click("button:has-text('Create key')")
    raw = page.locator("[data-raw-key]").input_value()
    assert raw.startswith("gmcp_")
    shoot(page, "05-key-created")

    page.goto(f"/servers/{slug}/playground/")
    expect(page.locator("#pg-status")).to_have_text(re.compile("Connected"))
    page.fill("#pg-key", raw)
    page.click("#pg-connect")
    expect(page.locator("#pg-status")).to_have_text(re.compile("Connected to Demo server"))

    page.click(".pg-item:has-text('echo')")
    page.get_by_label("Message").fill("hello from the browser")
    page.click("#pg-run")
    expect(page.locator("#pg-result-body")).to_contain_text("You said: hello from the browser")
    expect(page.locator("#pg-timing")).to_have_text(re.compile(r"^\d+ ms$"))
    expect(page.locator("#pg-exchange")).to_contain_text("tools/call")

    page.click(".pg-item:has-text('confirm_send')")
    page.get_by_label("Message").fill("launch")
    page.click("#pg-run")
    request = page.locator("#pg-request")
    expect(request).to_be_visible()
    expect(request).to_contain_text("Send “launch”?")
    shoot(page, "06-playground-elicitation")
    request.get_by_label("Confirm").check()
    request.get_by_role("button", name="Accept").click()
    expect(page.locator("#pg-result-body")).to_contain_text("You chose: accept")
    expect(page.locator("#pg-history li")).to_have_count(2)
    shoot(page, "07-playground-result")

    page.goto(f"/servers/{slug}/connect/")
    expect(page.locator("#code-claude-code")).to_contain_text(
        f"claude mcp add --transport http {slug}"
    )
    page.fill("#paste-key", raw)
    expect(page.locator("#code-cursor")).to_contain_text(raw)
    shoot(page, "08-connect")

    # A playground tab connected with the key, before the key is revoked elsewhere.
    playground = page.context.new_page()
    playground.goto(f"/servers/{slug}/playground/")
    playground.fill("#pg-key", raw)
    playground.click("#pg-connect")
    expect(playground.locator("#pg-status")).to_have_text(re.compile("Connected to"))
    # The page says so before its tools/list returns: the revocation must come after it.
    expect(playground.locator(".pg-item:has-text('echo')")).to_be_visible()

    page.goto("/servers/")
    shoot(page, "11-servers-list")
    page.goto("/keys/")
    shoot(page, "12-keys")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("tr:has-text('Browser key') button:has-text('Revoke')")
    expect(page.locator(".message-success")).to_contain_text("revoked")

    playground.click(".pg-item:has-text('echo')")
    playground.get_by_label("Message").fill("after revoke")
    playground.click("#pg-run")
    expect(playground.locator("#pg-result-body")).to_contain_text(
        "HTTP 403: API key revoked or expired"
    )
    expect(playground.locator("#pg-status")).to_have_text(re.compile("Refused"))
    playground.click("#pg-connect")
    expect(playground.locator("#pg-status")).to_have_text(
        re.compile(r"Not connected: HTTP 403: API key revoked or expired")
    )
    # Refusals by the MCP endpoint are the point here; anything else is a bug in the page.
    unexpected = [e for e in page.errors + playground.errors if f"/mcp/{slug}" not in e]
    assert not unexpected

    page.goto("/organization/members/")
    page.fill("#id_email", f"teammate-{unique}@example.com")
    page.click("button:has-text('Send invitation')")
    expect(
        page.get_by_role("cell", name=f"teammate-{unique}@example.com", exact=True)
    ).to_be_visible()
    shoot(page, "13-members")

    outsider = new_page()
    sign_up(outsider, f"mallory-{unique}@example.net")
    for path in ("", "settings/", "playground/", "connect/", "tools/new/"):
        response = outsider.goto(f"/servers/{slug}/{path}")
        assert response.status == 404, path
    outsider.goto("/servers/")
    expect(outsider.locator("body")).not_to_contain_text(slug)

    # The endpoint's recorder pushes calls to Redis within a second; the drain moves them in.
    found = False
    for _ in range(30):
        db_call(drain_call_log)
        page.goto(f"/calls/?server={slug}")
        if page.locator("td", has_text="confirm_send").count():
            found = True
            break
        page.wait_for_timeout(500)
    assert found, "the playground's calls never reached the call log"
    expect(page.locator("td", has_text="Browser key").first).to_be_visible()
    shoot(page, "09-call-log")
    page.goto("/analytics/")
    expect(page.locator(".stat-value").first).not_to_have_text("0")
    shoot(page, "10-analytics")
