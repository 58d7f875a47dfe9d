"""JSON and YAML fields as a real code editor (Ace, installed by `make assets`): it appears in
place of the textarea, highlights, shows inline errors (JSON parse, JSON Schema from the
server's check, YAML parse) and the form still saves what the editor holds."""

import json
import re

import pytest
from playwright.sync_api import expect

from accounts.models import User
from dashboard.templatetags.code_editor import code_editor_installed
from servers.models import Server, Tool

from .test_dashboard_flow import sign_up

pytestmark = pytest.mark.skipif(
    not code_editor_installed(), reason="Ace is not installed: run `make assets`"
)


def set_code(page, field_id, text):
    page.evaluate(
        "([id, text]) => document.getElementById(id).codeEditor.setValue(text, 1)", [field_id, text]
    )


def errors_of(page, field_id):
    return page.locator(f"#{field_id}").locator("xpath=preceding-sibling::div[1]")


def test_the_tool_editor_edits_json_and_yaml_with_inline_errors_and_saves(
    new_page, shoot, db_call, unique
):
    page = new_page()
    email = f"editor-{unique}@example.com"
    slug = f"editor-{unique}"
    sign_up(page, email)

    def make_server():
        org = User.objects.get(email=email).personal_organization()
        Server.objects.create(organization=org, slug=slug, name="editor", title="Editor")

    db_call(make_server)
    page.goto(f"/servers/{slug}/tools/new/")

    schema = page.locator(".code-editor").first
    # Input schema, output schema, config, and the code kind's Python source (hidden until chosen).
    expect(page.locator(".code-editor")).to_have_count(4)
    expect(schema.locator(".ace_content")).to_be_visible()
    # Highlighting: the default schema's keys and strings are tokens, not plain text.
    expect(schema.locator(".ace_variable, .ace_string").first).to_be_visible()
    # Folding widgets come with bracket structure; the gutter numbers the lines.
    expect(schema.locator(".ace_gutter-cell").first).to_have_text("1")

    # Typing for real, through the keyboard, lands in the form's textarea.
    schema.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.type('{"type": "object", "properties": {"city": {"type": "string"}}}')
    textarea_value = page.eval_on_selector("#id_input_schema", "el => el.value")
    assert json.loads(textarea_value) == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
    }
    # Bracket matching: with the cursor after the last brace, its partner is marked.
    expect(schema.locator(".ace_bracket")).not_to_have_count(0)
    # Tab indents inside the editor; Escape then Tab leaves it for the next field (no trap).
    in_first_editor = (
        "document.activeElement.closest('.code-editor') === document.querySelector('.code-editor')"
    )
    assert page.evaluate(in_first_editor)
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert not page.evaluate(in_first_editor)

    # A JSON parse error: an error mark in the gutter on the broken line, and its message.
    set_code(page, "id_input_schema", '{\n  "type": "object",\n  "properties": {\n}')
    expect(schema.locator(".ace_gutter-cell.ace_error")).to_have_count(1)
    expect(schema).to_have_attribute("data-errors", re.compile("Invalid JSON"))
    expect(schema).to_have_class(re.compile("code-editor-invalid"))
    shoot(page, "40-code-editor-json-error")

    # A JSON Schema error, from the server's check, on the line of the key it names.
    set_code(
        page,
        "id_input_schema",
        json.dumps({"type": "object", "properties": {"a": {"type": 5}}}, indent=2),
    )
    expect(schema).to_have_attribute(
        "data-errors", re.compile(r"line 5: JSON Schema: properties\.a\.type")
    )
    expect(schema.locator(".ace_gutter-cell.ace_error")).to_have_text("5")

    # The output schema is checked too, without the "must be an object type" rule.
    output = page.locator(".code-editor").nth(1)
    set_code(page, "id_output_schema", '{"type": "array"}')
    expect(output).to_have_attribute("data-errors", "")
    set_code(page, "id_output_schema", '{"type": "nope"}')
    expect(output).to_have_attribute("data-errors", re.compile("JSON Schema"))
    set_code(page, "id_output_schema", "")

    # The config takes YAML: a YAML error is shown, valid YAML is not an error.
    config = page.locator(".code-editor:has(+ #id_config)")  # the editor stands before its field
    set_code(page, "id_config", "content:\n  - type: text\n    text: [unclosed\n")
    expect(config).to_have_attribute("data-errors", re.compile("Invalid YAML"))
    shoot(page, "41-code-editor-yaml-error")
    set_code(page, "id_config", "content:\n  - type: text\n    text: 'Hi {{ city }}'\n")
    expect(config).to_have_attribute("data-errors", "")

    # Switching kinds still fills in the kind's example, in the editor.
    page.select_option("#id_kind", "workflow")
    page.select_option("#id_kind", "static")

    set_code(
        page,
        "id_input_schema",
        json.dumps({"type": "object", "properties": {"city": {"type": "string"}}}, indent=2),
    )
    expect(schema).to_have_attribute("data-errors", "")
    page.fill("#id_name", "weather")
    page.fill("#id_description", "Says hi to a city.")
    page.click("button:has-text('Create tool')")
    expect(page.locator(".part", has_text="weather")).to_be_visible()
    tool = db_call(lambda: Tool.objects.get(server__slug=slug, name="weather"))
    assert tool.input_schema == {"type": "object", "properties": {"city": {"type": "string"}}}
    assert tool.config == {"content": [{"type": "text", "text": "Hi {{ city }}"}]}

    # Editing shows the saved values in the editors; a broken save is refused, the text kept.
    page.goto(f"/servers/{slug}/tools/{tool.pk}/")
    expect(page.locator(".code-editor").first).to_contain_text('"city"')
    set_code(page, "id_input_schema", '{"type": ')
    page.click("button:has-text('Save tool')")
    expect(page.locator("#id_input_schema_errors")).to_contain_text("Not valid JSON")
    expect(page.locator(".code-editor").first).to_contain_text('{"type":')
    # The refused save answers 400 (the browser logs that); nothing else may complain, CSP included.
    assert [e for e in page.errors if "status of 400" not in e] == []


def test_without_the_editor_the_fields_stay_plain_textareas_that_save(new_page, db_call, unique):
    page = new_page()
    email = f"plain-{unique}@example.com"
    slug = f"plain-{unique}"
    sign_up(page, email)

    def make_server():
        org = User.objects.get(email=email).personal_organization()
        Server.objects.create(organization=org, slug=slug, name="plain")

    db_call(make_server)
    # As if `make assets` had never run (or Ace failed to load): nothing is upgraded.
    page.route("**/vendor/ace/ace.js", lambda route: route.abort())
    page.goto(f"/servers/{slug}/tools/new/")
    expect(page.locator("#id_input_schema")).to_be_visible()
    expect(page.locator(".code-editor")).to_have_count(0)
    page.fill("#id_name", "plain_tool")
    page.fill("#id_description", "Saved from a plain textarea.")
    # The form's default config echoes {{ message }}: the schema must declare it (save-time check).
    page.fill(
        "#id_input_schema", '{"type": "object", "properties": {"message": {"type": "string"}}}'
    )
    page.click("button:has-text('Create tool')")
    expect(page.locator(".part", has_text="plain_tool")).to_be_visible()
    assert db_call(lambda: Tool.objects.filter(server__slug=slug, name="plain_tool").exists())
