"""Task tools for people, in a real browser with a real Celery worker: the playground runs a
task-required tool (status, progress, a question answered while it is input_required, the
result), runs an optional one as a task and cancels it, and the server's Tasks page lists both
with who started them and cancels a third."""

import re

import pytest
from playwright.sync_api import expect

from accounts.models import User
from servers.definition import import_definition
from tests.celery_workers import running_workers

from .test_dashboard_flow import sign_up

FORMAT_SCHEMA = {
    "type": "object",
    "properties": {"format": {"type": "string", "title": "Format"}},
    "required": ["format"],
}


def definition(slug):
    return {
        "slug": slug,
        "name": "reports",
        "title": "Reports",
        "tools": [
            {
                "name": "report",
                "description": "Writes a report; asks its format on the way.",
                "inputSchema": {"type": "object", "properties": {}},
                "execution": {"taskSupport": "required"},
                "kind": "workflow",
                "config": {
                    "steps": [
                        {"progress": {"progress": 1, "total": 3, "message": "Gathering"}},
                        {"sleep": {"ms": 300}},
                        {
                            "elicit": {
                                "message": "Which format?",
                                "requestedSchema": FORMAT_SCHEMA,
                                "into": "answer",
                            }
                        },
                        {"progress": {"progress": 2, "total": 3, "message": "Writing"}},
                        {"sleep": {"ms": 200}},
                        {
                            "return": {
                                "content": [
                                    {
                                        "type": "text",
                                        "text": "Report in {{ answer.content.format }}",
                                    }
                                ]
                            }
                        },
                    ]
                },
            },
            {
                "name": "endless",
                "description": "Works until someone cancels it.",
                "inputSchema": {"type": "object", "properties": {}},
                "execution": {"taskSupport": "optional"},
                "kind": "workflow",
                "config": {
                    "steps": [
                        {"sleep": {"ms": 60000}},
                        {"return": {"content": [{"type": "text", "text": "never"}]}},
                    ]
                },
            },
        ],
    }


@pytest.fixture
def worker(live_database, tmp_path):
    with running_workers(tmp_path) as start:
        yield start()


def test_the_playground_runs_task_tools_and_the_tasks_page_follows_them(
    new_page, shoot, db_call, unique, worker
):
    page = new_page()
    email = f"tasks-{unique}@example.com"
    slug = f"reports-{unique}"
    sign_up(page, email)
    db_call(
        lambda: import_definition(
            definition(slug), User.objects.get(email=email).organizations().get()
        )
    )

    page.goto(f"/servers/{slug}/playground/")
    expect(page.locator("#pg-status")).to_have_text(re.compile("Connected to Reports"))

    # A task-required tool: always a task, the choice is shown but fixed.
    page.click(".pg-item:has-text('report')")
    expect(page.locator("#pg-as-task")).to_be_checked()
    expect(page.locator("#pg-as-task")).to_be_disabled()
    page.click("#pg-run")
    task = page.locator("#pg-task")
    expect(task).to_be_visible()
    expect(page.locator("#pg-task-progress-text")).to_contain_text("1 / 3 · Gathering")
    ask = page.locator("#pg-request")
    expect(ask).to_contain_text("Which format?")
    expect(page.locator("#pg-task-status")).to_have_text("Input required")
    shoot(page, "30-playground-task-asks")
    ask.get_by_label("Format").fill("PDF")
    ask.get_by_role("button", name="Accept").click()
    expect(page.locator("#pg-result-body")).to_contain_text("Report in PDF")
    expect(page.locator("#pg-task-status")).to_have_text("Completed")
    # The last progress said 2 / 3; a completed task's bar is full all the same.
    expect(page.locator("#pg-task-progress-text")).to_have_text("3 / 3 · Done")
    bar = page.locator("#pg-task-progress")
    assert bar.evaluate("(b) => b.value === b.max && b.max === 3")
    for width, height in ((1280, 800), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        shoot(page, f"playground-task-done-{width}")
    page.set_viewport_size({"width": 1360, "height": 900})
    expect(page.locator("#pg-task-cancel")).to_be_hidden()
    shoot(page, "31-playground-task-done")

    # An optional tool runs as a task only when asked to; this one is cancelled from the page.
    page.click(".pg-item:has-text('endless')")
    expect(page.locator("#pg-as-task")).not_to_be_checked()
    page.check("#pg-as-task")
    page.click("#pg-run")
    expect(page.locator("#pg-task-status")).to_have_text("Working")
    page.click("#pg-task-cancel")
    expect(page.locator("#pg-task-status")).to_have_text("Cancelled")
    expect(page.locator("#pg-result-body")).to_contain_text("The task was cancelled.")
    expect(page.locator("#pg-run")).to_be_enabled()

    # Another run, cancelled from the Tasks page while the playground follows it.
    page.click("#pg-run")
    expect(page.locator("#pg-task-status")).to_have_text("Working")
    tasks_page = page.context.new_page()
    tasks_page.on("dialog", lambda dialog: dialog.accept())
    tasks_page.goto(f"/servers/{slug}/tasks/")
    rows = tasks_page.locator("#tasks tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.filter(has_text="report")).to_contain_text("Completed")
    expect(rows.first).to_contain_text("Playground · " + email)
    shoot(tasks_page, "32-tasks-page")
    running = rows.filter(has_text="Working")
    expect(running).to_have_count(1)
    running.get_by_role("button", name=re.compile("Cancel")).click()
    # The flash message, not the "no beat" banner that is an alert too.
    expect(tasks_page.locator(".messages")).to_contain_text("cancelled")
    expect(page.locator("#pg-task-status")).to_have_text("Cancelled", timeout=20_000)
    expect(page.locator("#pg-result-body")).to_contain_text("cancelled")

    tasks_page.select_option("#f-status", "cancelled")
    expect(tasks_page).to_have_url(re.compile(r"status=cancelled"))
    expect(tasks_page.locator("#tasks tbody tr")).to_have_count(2)
    assert not page.errors and not tasks_page.errors
