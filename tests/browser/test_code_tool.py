"""A code tool written in the dashboard, in a real browser: the Python source field appears for
kind: code, a syntax error is shown beside it on save, the test page runs it and lists its host
calls, and the playground calls it (answering the question the code asks)."""

import json
import re

from playwright.sync_api import expect

from .test_dashboard_flow import ECHO_SCHEMA, sign_up

BROKEN = "async def main(args, ctx):\n    return (args['message']\n"
SOURCE = """async def main(args, ctx):
    log("info", "shouting " + args["message"])
    answer = await elicit("Shout it?", {
        "type": "object",
        "properties": {"loud": {"type": "boolean", "title": "Loud"}},
        "required": ["loud"],
    })
    text = args["message"]
    if answer["action"] == "accept" and answer["content"]["loud"]:
        text = text.upper() + "!"
    return {"content": [{"type": "text", "text": "Code says: " + text}]}
"""


def test_a_code_tool_is_written_tested_and_called_from_the_playground(new_page, shoot, unique):
    page = new_page()
    slug = f"code-{unique}"
    sign_up(page, f"coder-{unique}@example.com")
    page.goto("/servers/new/")
    page.fill("#id_name", "Coder")
    page.fill("#id_slug", slug)
    page.click("button:has-text('Create server')")
    expect(page).to_have_url(re.compile(rf"/servers/{slug}/$"))

    page.goto(f"/servers/{slug}/tools/new/")
    source = page.locator("#id_source")
    expect(source).to_be_hidden()  # only kind: code has a source
    page.fill("#id_name", "shout")
    page.fill("#id_description", "Shouts a message, if you agree.")
    page.fill("#id_input_schema", json.dumps(ECHO_SCHEMA, indent=2))
    page.select_option("#id_kind", "code")
    expect(source).to_be_visible()
    expect(source).to_have_attribute("data-code-editor", "python")
    expect(source).to_have_value(re.compile(r"async def main\(args, ctx\)"))  # the example
    expect(page.locator(".code-signature")).to_contain_text("def main(args)")

    source.fill(BROKEN)
    page.click("button:has-text('Create tool')")
    expect(page.locator("#id_source_errors")).to_contain_text("line 2")
    expect(page.locator("#id_source_errors")).to_contain_text("unexpected EOF while parsing")
    shoot(page, "code-01-syntax-error")

    page.locator("#id_source").fill(SOURCE)
    page.click("button:has-text('Create tool')")
    expect(page.locator(".part", has_text="shout")).to_be_visible()

    page.click(".part:has-text('shout') a:has-text('Test')")
    page.get_by_label("Message").fill("quiet")
    page.click("#tr-run")
    # A test run has no client to ask: the tool says so, with the host calls made until then.
    expect(page.locator("#tr-result")).to_contain_text("needs the client to answer")
    expect(page.locator("#tr-host")).to_contain_text("log")
    expect(page.locator("#tr-host")).to_contain_text("elicit")
    expect(page.locator("#tr-logs")).to_contain_text("[info] shouting quiet")
    shoot(page, "code-02-test-run")

    page.goto(f"/servers/{slug}/playground/")
    expect(page.locator("#pg-status")).to_have_text(re.compile("Connected to"))
    page.click(".pg-item:has-text('shout')")
    page.get_by_label("Message").fill("hello")
    page.click("#pg-run")
    request = page.locator("#pg-request")
    expect(request).to_contain_text("Shout it?")
    request.get_by_label("Loud").check()
    request.get_by_role("button", name="Accept").click()
    expect(page.locator("#pg-result-body")).to_contain_text("Code says: HELLO!")
    shoot(page, "code-03-playground")
    # The only failed load is the refused save of the broken source (a 400 with the form).
    assert [e for e in page.errors if "status of 400" not in e] == []
