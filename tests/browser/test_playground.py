"""The playground against the real endpoint: resources, templates, prompts, sampling, raw JSON,
history, and a temporary key minted for the user when none is pasted."""

import re

from playwright.sync_api import expect

from accounts.models import ApiKey, User
from servers.definition import import_definition

from .test_dashboard_flow import sign_up


def definition(slug):
    return {
        "slug": slug,
        "name": "tour",
        "title": "Tour server",
        "tools": [
            {
                "name": "echo",
                "description": "Echo a message back.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"message": {"type": "string"}},
                    "required": ["message"],
                },
                "config": {"content": [{"type": "text", "text": "You said {{ message }}"}]},
            },
            {
                "name": "ask_model",
                "description": "Asks the client's model.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"question": {"type": "string", "title": "Question"}},
                    "required": ["question"],
                },
                "kind": "workflow",
                "config": {
                    "steps": [
                        {
                            "sample": {
                                "messages": [
                                    {
                                        "role": "user",
                                        "content": {"type": "text", "text": "{{ question }}"},
                                    }
                                ],
                                "maxTokens": 20,
                                "into": "reply",
                            }
                        },
                        {
                            "return": {
                                "content": [
                                    {"type": "text", "text": "Model said: {{ reply.content.text }}"}
                                ]
                            }
                        },
                    ]
                },
            },
        ],
        "resources": [
            {
                "uri": "note://readme",
                "name": "readme",
                "mimeType": "text/plain",
                "text": "Read me first.",
            }
        ],
        "resourceTemplates": [
            {
                "uriTemplate": "note://items/{id}",
                "name": "item",
                "mimeType": "text/plain",
                "text": "Item {{ id }}",
            }
        ],
        "prompts": [
            {
                "name": "greet",
                "description": "Greets someone.",
                "arguments": [{"name": "who", "required": True}],
                "messages": [{"role": "user", "content": {"type": "text", "text": "Hi {{ who }}"}}],
            }
        ],
    }


def test_the_playground_reads_gets_samples_and_remembers(new_page, shoot, db_call, unique):
    page = new_page()
    email = f"tour-{unique}@example.com"
    slug = f"tour-{unique}"
    sign_up(page, email)

    def setup():
        org = User.objects.get(email=email).personal_organization()
        import_definition(definition(slug), org)

    db_call(setup)

    page.goto(f"/servers/{slug}/playground/")
    # No key pasted: the page minted a temporary one limited to this server.
    expect(page.locator("#pg-status")).to_have_text(re.compile("Connected to Tour server"))
    minted = db_call(lambda: list(ApiKey.objects.filter(created_by__email=email)))
    assert len(minted) == 1 and minted[0].name.startswith("Playground")
    assert db_call(lambda: [s.slug for s in minted[0].servers.all()]) == [slug]

    page.click("#pg-tab-resources")
    page.click(".pg-item:has-text('readme')")
    page.click("#pg-run")
    expect(page.locator("#pg-result-body")).to_contain_text("Read me first.")

    page.click(".pg-item:has-text('item')")
    page.get_by_label("id").fill("42")
    page.click("#pg-run")
    expect(page.locator("#pg-result-body")).to_contain_text("Item 42")

    page.click("#pg-tab-prompts")
    page.click(".pg-item:has-text('greet')")
    page.get_by_label("who").fill("Ada")
    page.click("#pg-run")
    expect(page.locator("#pg-result-body")).to_contain_text("Hi Ada")

    page.click("#pg-tab-tools")
    page.click(".pg-item:has-text('ask_model')")
    page.get_by_label("Question").fill("What is six times seven?")
    page.click("#pg-run")
    ask = page.locator("#pg-request")
    expect(ask).to_contain_text("user: What is six times seven?")
    ask.get_by_label("Your reply, as the model").fill("42")
    ask.get_by_role("button", name="Send reply").click()
    expect(page.locator("#pg-result-body")).to_contain_text("Model said: 42")

    page.click(".pg-item:has-text('echo')")
    page.get_by_label("Raw JSON").check()
    page.fill("#pg-raw", '{"message": "raw"')
    page.click("#pg-run")
    expect(page.locator("#pg-raw-error")).to_contain_text("Arguments:")
    page.fill("#pg-raw", '{"message": "raw mode"}')
    page.click("#pg-run")
    expect(page.locator("#pg-result-body")).to_contain_text("You said raw mode")
    expect(page.locator("#pg-timing")).to_have_text(re.compile(r"^\d+ ms$"))
    # Another item does not show the last call's time as if it were its own.
    page.click(".pg-item:has-text('ask_model')")
    expect(page.locator("#pg-timing")).to_have_text("")
    page.click(".pg-item:has-text('echo')")

    # A required argument left empty is caught in the page, next to its input.
    page.get_by_label("Form").check()
    page.locator("#pg-inputs").get_by_label("message").fill("")
    page.click("#pg-run")
    expect(page.locator("#pg-inputs .field-errors")).to_have_text("Required.")

    history = page.locator("#pg-history li")
    expect(history).to_have_count(5)
    page.click("#pg-tab-resources")
    page.click(".pg-item:has-text('readme')")
    history.filter(has_text="prompts/get greet").click()
    expect(page.get_by_label("who")).to_have_value("Ada")
    shoot(page, "14-playground-tour")

    # History survives a reload (localStorage).
    page.reload()
    expect(page.locator("#pg-history li")).to_have_count(5)
    assert not page.errors

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/servers/")
    shoot(page, "15-mobile-servers")
    page.click("[data-nav-toggle]")
    expect(page.locator("#sidebar")).to_be_visible()
    shoot(page, "16-mobile-nav")
