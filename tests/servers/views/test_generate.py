"""Templates fitted to a tool's result, from its output schema or from a sample result."""

from servers.views import generate_view

ORDERS_SCHEMA = {
    "type": "object",
    "properties": {
        "orders": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "day": {"type": "string"},
                    "total": {"type": "number"},
                    "count": {"type": "integer"},
                },
            },
        }
    },
}


def test_a_table_finds_the_rows_inside_the_output_schema():
    assert generate_view("table", output_schema=ORDERS_SCHEMA) == {
        "template": "table",
        "data": "orders",
        "columns": [
            {"key": "day", "label": "Day"},
            {"key": "total", "label": "Total"},
            {"key": "count", "label": "Count"},
        ],
        "pageSize": 10,
    }


def test_a_table_from_a_sample_takes_every_field_of_its_rows_in_order():
    sample = {
        "content": [{"type": "text", "text": "..."}],
        "structuredContent": [{"id": 1, "first_name": "Ada"}, {"id": 2, "city": "Paris"}],
    }
    view = generate_view("table", sample=sample)
    assert "data" not in view
    assert view["columns"] == [
        {"key": "id", "label": "Id"},
        {"key": "first_name", "label": "First name"},
        {"key": "city", "label": "City"},
    ]


def test_a_sample_wins_over_the_schema():
    view = generate_view("table", output_schema=ORDERS_SCHEMA, sample={"rows": [{"x": 1}]})
    assert view["data"] == "rows" and view["columns"] == [{"key": "x", "label": "X"}]


def test_a_chart_plots_the_numeric_fields_against_the_first_other_one():
    assert generate_view("chart", output_schema=ORDERS_SCHEMA, chart_type="bar")["chart"] == {
        "type": "bar",
        "x": "day",
        "y": ["total", "count"],
    }
    sample = [{"month": "Jan", "sales": 3, "note": "low"}, {"month": "Feb", "sales": 5.5}]
    assert generate_view("chart", sample=sample)["chart"] == {
        "type": "line",
        "x": "month",
        "y": ["sales"],
    }


def test_a_card_lists_the_fields_of_one_record():
    assert generate_view("card", sample={"name": "Ada", "born": 1815}) == {
        "template": "card",
        "fields": [{"key": "name", "label": "Name"}, {"key": "born", "label": "Born"}],
    }


def test_a_form_names_the_tool_it_calls_and_custom_html_starts_from_a_working_document():
    assert generate_view("form", form_tool="create_order") == {
        "template": "form",
        "tool": "create_order",
        "submitLabel": "Send",
    }
    html = generate_view("html")["html"]
    assert "new McpApps.App(" in html and "textContent" in html and "innerHTML" not in html


def test_a_result_of_unknown_shape_leaves_the_fields_to_the_person():
    assert generate_view("table", sample="plain text") == {"template": "table", "pageSize": 10}
    assert generate_view("chart") == {"template": "chart", "chart": {"type": "line"}}
