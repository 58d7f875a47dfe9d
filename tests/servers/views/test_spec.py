"""A tool's `view` is checked like every other field: each problem named by its path."""

from servers.definition import validate_definition
from servers.views import view_problems


def test_an_empty_view_is_no_view():
    assert view_problems({}) == []
    assert view_problems(None) == []


def test_a_view_needs_a_known_template():
    assert view_problems({"template": "gallery"}) == [
        "view.template: must be one of table, card, chart, form, html"
    ]


def test_an_origin_that_could_break_out_of_the_policy_is_refused():
    problems = view_problems(
        {
            "template": "table",
            "csp": {
                "connectDomains": ["https://api.example.com", "https://a.com; script-src *"],
                "resourceDomains": ["'unsafe-eval'", "https://*.cdn.example.com"],
                "scriptDomains": [],
            },
        }
    )
    assert problems == [
        "view.csp.scriptDomains: unknown field (known: connectDomains, resourceDomains, "
        "frameDomains, baseUriDomains)",
        "view.csp.connectDomains[1]: must be an origin like https://api.example.com "
        "(a scheme and a host, no path)",
        "view.csp.resourceDomains[0]: must be an origin like https://api.example.com "
        "(a scheme and a host, no path)",
    ]


def test_permissions_are_the_extensions_four_each_requested_with_an_empty_mapping():
    assert view_problems({"template": "card", "permissions": {"camera": {}}}) == []
    assert view_problems({"template": "card", "permissions": {"usb": {}, "microphone": True}}) == [
        "view.permissions.usb: unknown permission (known: camera, microphone, geolocation, "
        "clipboardWrite)",
        "view.permissions.microphone: must be {} (requested) or left out",
    ]


def test_the_html_template_needs_its_document_and_the_form_its_tool():
    assert view_problems({"template": "html"}) == ["view.html: required for the html template"]
    assert view_problems({"template": "form"}) == ["view.tool: the form's tool is required"]


def test_a_form_must_call_a_tool_of_the_same_server():
    tool = {
        "name": "ask",
        "description": "d",
        "inputSchema": {"type": "object"},
        "config": {"content": [{"type": "text", "text": "ok"}]},
        "view": {"template": "form", "tool": "missing"},
    }
    problems = validate_definition({"slug": "views-spec", "name": "n", "tools": [tool]})
    assert problems == ["tools[0].view.tool: no tool 'missing' in this server"]
    other = {**tool, "name": "missing", "view": {}}
    assert validate_definition({"slug": "views-spec", "name": "n", "tools": [tool, other]}) == []


def test_table_settings_are_checked():
    problems = view_problems(
        {"template": "table", "columns": [{"key": "a b"}, "x"], "pageSize": 0, "extra": 1}
    )
    assert problems == [
        "view.extra: unknown field",
        "view.columns[0].key: must be a field name (no spaces)",
        "view.columns[1]: must be a mapping with key and label",
        "view.pageSize: must be a whole number from 1 to 500",
    ]
