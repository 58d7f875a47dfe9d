"""Tool views as MCP Apps, in Chromium, rendered by the playground's preview: a host built from
the official SDK's host side (AppBridge), with the view in a sandbox proxy whose policy is the
view's declared one. The views themselves talk to it through the SDK's app side."""

import re

import pytest
from playwright.sync_api import expect

from accounts.models import User
from activity.drain import drain_call_log
from activity.models import CallLog
from dashboard.views.view_sandbox import view_host_installed
from servers.definition import import_definition
from servers.models import Tool

from .test_dashboard_flow import sign_up

pytestmark = pytest.mark.skipif(
    not view_host_installed(), reason="the MCP Apps SDK is not installed: run `make assets`"
)

HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="document.title=1">'
ORDERS = [{"id": n, "item": f"item {n:02d}", "total": n * 10} for n in range(1, 13)]
ORDERS[6]["item"] = HOSTILE

LEAKY_HTML = """<!doctype html>
<html><head><meta charset="utf-8"></head>
<body><ol id="log"></ol>
<script type="module">
  const log = (text) => { const li = document.createElement("li"); li.textContent = text;
                          document.getElementById("log").appendChild(li); };
  document.addEventListener("securitypolicyviolation", (e) =>
    log(`policy blocked ${e.blockedURI} (${e.effectiveDirective})`));
  const app = new McpApps.App({ name: "leaky", version: "1.0.0" });
  app.ontoolresult = async () => {
    for (const url of ["DECLARED/declared", "UNDECLARED/undeclared"]) {
      try { await fetch(url); log(`fetched ${url}`); }
      catch (e) { log(`fetch failed ${url}`); }
    }
    log("done");
  };
  await app.connect();
</script></body></html>
"""


def definition(slug, declared, undeclared):
    return {
        "slug": slug,
        "name": "shop",
        "title": "Shop",
        "tools": [
            {
                "name": "list_orders",
                "description": "Lists the orders.",
                "inputSchema": {"type": "object", "properties": {}},
                "config": {
                    "content": [{"type": "text", "text": "12 orders"}],
                    "structuredContent": {"orders": ORDERS},
                },
                "view": {
                    "template": "table",
                    "title": "Orders",
                    "data": "orders",
                    "columns": [
                        {"key": "id", "label": "Order"},
                        {"key": "item", "label": "Item"},
                        {"key": "total", "label": "Total"},
                    ],
                    "pageSize": 5,
                },
            },
            {
                "name": "create_order",
                "description": "Creates an order.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "item": {"type": "string", "title": "Item"},
                        "quantity": {"type": "integer", "title": "Quantity"},
                    },
                    "required": ["item"],
                },
                "config": {
                    "content": [{"type": "text", "text": "Created {{ item }}"}],
                    "structuredContent": {"created": "{{ item }}", "quantity": "{{ quantity }}"},
                },
            },
            {
                "name": "order_form",
                "description": "Shows a form that creates orders.",
                "inputSchema": {"type": "object", "properties": {}},
                "config": {"content": [{"type": "text", "text": "Fill in the form."}]},
                "view": {"template": "form", "tool": "create_order", "submitLabel": "Create"},
            },
            {
                "name": "sales_chart",
                "description": "Monthly sales.",
                "inputSchema": {"type": "object", "properties": {}},
                "config": {
                    "content": [{"type": "text", "text": "sales"}],
                    "structuredContent": {
                        "months": [
                            {"month": "Jan", "sales": 3, "returns": 1},
                            {"month": "Feb", "sales": 5, "returns": 0},
                            {"month": "Mar", "sales": 4, "returns": 2},
                        ]
                    },
                },
                "view": {
                    "template": "chart",
                    "data": "months",
                    "chart": {"type": "bar", "x": "month", "y": ["sales", "returns"]},
                },
            },
            {
                "name": "leaky",
                "description": "A view that tries to reach other origins.",
                "inputSchema": {"type": "object", "properties": {}},
                "config": {"content": [{"type": "text", "text": "leaky"}]},
                "view": {
                    "template": "html",
                    "html": LEAKY_HTML.replace("UNDECLARED", undeclared).replace(
                        "DECLARED", declared
                    ),
                    "csp": {"connectDomains": [declared]},
                },
            },
        ],
    }


@pytest.fixture
def shop(new_page, db_call, unique, dashboard_server):
    page = new_page()
    email = f"views-{unique}@example.com"
    slug = f"views-{unique}"
    sign_up(page, email)
    port = dashboard_server.url.rsplit(":", 1)[1].strip("/")
    declared, undeclared = f"http://127.0.0.1:{port}", f"http://localhost:{port}"

    def setup():
        org = User.objects.get(email=email).personal_organization()
        import_definition(definition(slug, declared, undeclared), org)

    db_call(setup)
    page.goto(f"/servers/{slug}/playground/")
    expect(page.locator("#pg-status")).to_have_text(re.compile("Connected to Shop"))
    return page, slug, declared, undeclared


def run_tool(page, name):
    page.click(f".pg-item:has-text('{name}')")
    page.click("#pg-run")
    frame = page.locator("#pg-view-frame iframe")
    expect(frame).to_have_attribute("data-state", "loaded")
    return page.frame_locator("#pg-view-frame iframe").frame_locator("iframe")


def test_a_table_view_renders_the_real_result_sorted_and_paged(shop, shoot):
    page, _, _, _ = shop
    view = run_tool(page, "list_orders")
    expect(view.locator("h1")).to_have_text("Orders")
    rows = view.locator("tbody tr")
    expect(rows).to_have_count(5)
    expect(rows.first.locator("td").nth(1)).to_have_text("item 01")
    expect(view.locator(".view-page")).to_have_text("Page 1 of 3 · 12 rows")
    view.get_by_role("button", name="Next").click()
    expect(view.locator(".view-page")).to_have_text("Page 2 of 3 · 12 rows")
    # Sorting by total, twice: descending, so the largest order comes first, on page 1 again.
    view.get_by_role("button", name="Total").click()
    view.get_by_role("button", name="Total").click()
    expect(view.locator("th").nth(2)).to_have_attribute("aria-sort", "descending")
    expect(rows.first.locator("td").first).to_have_text("12")
    expect(view.locator(".view-page")).to_have_text("Page 1 of 3 · 12 rows")
    shoot(page, "views-table")
    assert not page.errors


def test_a_result_holding_markup_is_shown_as_text(shop):
    page, _, _, _ = shop
    view = run_tool(page, "list_orders")
    view.get_by_role("button", name="Next").click()
    cell = view.locator("tbody tr", has_text="7").first.locator("td").nth(1)
    expect(cell).to_have_text(HOSTILE)
    # Nothing of it became an element, and no script of it ran.
    expect(view.locator("tbody img")).to_have_count(0)
    expect(view.locator("tbody script")).to_have_count(0)
    frames = page.frames
    assert all(frame.title() != "pwned" and frame.title() != "1" for frame in frames)


def test_a_form_view_calls_another_tool_through_the_host_and_shows_its_answer(shop, db_call):
    page, slug, _, _ = shop
    view = run_tool(page, "order_form")
    view.get_by_label("Item *").fill("teapot")
    view.get_by_label("Quantity").fill("3")
    view.get_by_role("button", name="Create").click()
    answer = view.locator(".view-answer")
    expect(answer).to_contain_text("teapot")
    expect(answer.locator("dd").nth(1)).to_have_text("3")
    # The call went out through the playground's session: it is in the exchange and the call log.
    expect(page.locator("#pg-exchange")).to_contain_text("tools/call")
    logged: list = []
    for _ in range(30):  # the recorder pushes calls to Redis within a second; the drain moves them
        db_call(drain_call_log)
        logged = db_call(
            lambda: list(
                CallLog.objects.filter(server_slug=slug, tool="create_order").values_list(
                    "method", "outcome"
                )
            )
        )
        if logged:
            break
        page.wait_for_timeout(500)
    assert logged == [("tools/call", "ok")]
    assert not page.errors


def test_a_view_cannot_reach_an_origin_its_policy_does_not_name(shop):
    page, _, declared, undeclared = shop
    view = run_tool(page, "leaky")
    log = view.locator("#log")
    expect(log).to_contain_text("done")
    expect(log).to_contain_text(f"policy blocked {undeclared}/undeclared (connect-src)")
    expect(log).to_contain_text(f"fetch failed {undeclared}/undeclared")
    # The declared origin is not refused by the policy (the server's CORS answer is its own).
    expect(log).not_to_contain_text(f"policy blocked {declared}")


def test_the_tool_editor_generates_a_view_from_a_sample_and_the_playground_shows_it(
    shop, db_call, shoot
):
    page, slug, _, _ = shop
    pk = db_call(lambda: Tool.objects.get(server__slug=slug, name="create_order").pk)
    page.goto(f"/servers/{slug}/tools/{pk}/")
    section = page.locator("#tool-view")
    section.get_by_label("Template").select_option("card")
    expect(section.get_by_label("Tool the form calls")).to_be_hidden()
    section.get_by_label("Sample result").fill(
        '{"content": [], "structuredContent": {"created": "kettle", "quantity": "2"}}'
    )
    section.get_by_role("button", name="Generate view").click()
    expect(page.locator("#view-generate-status")).to_contain_text("Generated")
    shoot(page, "views-editor")
    page.get_by_role("button", name="Save tool").click()
    expect(page).not_to_have_url(re.compile(rf"/tools/{pk}/$"))
    saved = db_call(lambda: Tool.objects.get(pk=pk).view)
    assert saved == {
        "template": "card",
        "fields": [
            {"key": "created", "label": "Created"},
            {"key": "quantity", "label": "Quantity"},
        ],
    }

    page.goto(f"/servers/{slug}/playground/")
    expect(page.locator("#pg-status")).to_have_text(re.compile("Connected to Shop"))
    page.click(".pg-item:has-text('create_order')")
    page.locator("#pg-inputs").get_by_label("Item").fill("kettle")
    page.click("#pg-run")
    expect(page.locator("#pg-view-frame iframe")).to_have_attribute("data-state", "loaded")
    view = page.frame_locator("#pg-view-frame iframe").frame_locator("iframe")
    expect(view.locator("dt").first).to_have_text("Created")
    expect(view.locator("dd").first).to_have_text("kettle")
    assert not page.errors


def test_a_chart_view_draws_a_bar_for_each_value_of_each_series(shop):
    page, _, _, _ = shop
    view = run_tool(page, "sales_chart")
    expect(view.locator("svg rect.bar")).to_have_count(6)
    expect(view.locator("svg rect.bar title").first).to_have_text("Jan · Sales: 3")
    expect(view.locator(".view-legend li")).to_have_text(["Sales", "Returns"])


def test_the_extension_is_advertised_once_a_tool_has_a_view(new_page, db_call, unique):
    page = new_page()
    email = f"noview-{unique}@example.com"
    slug = f"noview-{unique}"
    sign_up(page, email)
    plain = {
        "slug": slug,
        "name": "plain",
        "title": "Plain",
        "tools": [
            {
                "name": "stats",
                "description": "Some numbers.",
                "inputSchema": {"type": "object", "properties": {}},
                "config": {
                    "content": [{"type": "text", "text": "stats"}],
                    "structuredContent": {"rows": [{"name": "a", "n": 1}]},
                },
            }
        ],
    }

    def setup():
        org = User.objects.get(email=email).personal_organization()
        import_definition(plain, org)

    db_call(setup)
    page.goto(f"/servers/{slug}/playground/")
    expect(page.locator("#pg-status")).to_have_text(re.compile("Connected to Plain"))
    # The initialize result is in the exchange: no extension while no tool has a view.
    expect(page.locator("#pg-exchange")).to_contain_text('"serverInfo"')
    expect(page.locator("#pg-exchange")).not_to_contain_text("io.modelcontextprotocol/ui")

    pk = db_call(lambda: Tool.objects.get(server__slug=slug, name="stats").pk)
    page.goto(f"/servers/{slug}/tools/{pk}/")
    section = page.locator("#tool-view")
    section.get_by_label("Template").select_option("table")
    section.get_by_label("Sample result").fill('{"rows": [{"name": "a", "n": 1}]}')
    section.get_by_role("button", name="Generate view").click()
    expect(page.locator("#view-generate-status")).to_contain_text("Generated")
    page.get_by_role("button", name="Save tool").click()
    expect(page).not_to_have_url(re.compile(rf"/tools/{pk}/$"))

    page.goto(f"/servers/{slug}/playground/")
    expect(page.locator("#pg-status")).to_have_text(re.compile("Connected to Plain"))
    expect(page.locator("#pg-exchange")).to_contain_text("io.modelcontextprotocol/ui")
    view = run_tool(page, "stats")
    expect(view.locator("tbody td").first).to_have_text("a")
    assert not page.errors
