"""A template's settings worked out from what a tool returns: its output schema, or a sample
result (a CallToolResult, or its structuredContent). The person then adjusts them in the editor."""

from typing import Any

MAX_SAMPLE_ROWS = 50
NUMBER_TYPES = ("number", "integer")

STARTER_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>View</title>
</head>
<body>
  <main id="out">Waiting for the result…</main>
  <script type="module">
    // McpApps is the official MCP Apps SDK (@modelcontextprotocol/ext-apps), loaded before this.
    const app = new McpApps.App({ name: "custom view", version: "1.0.0" });
    app.ontoolresult = (result) => {
      // Written with textContent: a result is data, not markup.
      document.getElementById("out").textContent =
        JSON.stringify(result.structuredContent ?? result.content, null, 2);
    };
    await app.connect();
  </script>
</body>
</html>
"""


def label_of(key: str) -> str:
    words = key.replace("_", " ").replace("-", " ").strip()
    return (words[:1].upper() + words[1:]) if words else key


def _columns(keys) -> list[dict]:
    return [{"key": key, "label": label_of(key)} for key in keys]


def _schema_type(schema) -> str:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind or ""


def _object_rows_in_schema(schema) -> tuple[str, dict] | None:
    """(path, item properties) of an array of objects: the schema itself or one of its fields."""
    if not isinstance(schema, dict):
        return None
    if _schema_type(schema) == "array":
        items = schema.get("items") or {}
        if _schema_type(items) == "object" or "properties" in items:
            return "", items.get("properties") or {}
    for key, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict) and _schema_type(sub) == "array":
            items = sub.get("items") or {}
            if _schema_type(items) == "object" or "properties" in items:
                return key, items.get("properties") or {}
    return None


def _payload(sample) -> Any:
    if isinstance(sample, dict) and ("structuredContent" in sample or "content" in sample):
        return sample.get("structuredContent")
    return sample


def _object_rows_in_sample(data) -> tuple[str, list[dict]] | None:
    if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
        return "", data[:MAX_SAMPLE_ROWS]
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
                return key, value[:MAX_SAMPLE_ROWS]
    return None


def _keys_of_rows(rows: list[dict]) -> list[str]:
    keys: list[str] = []
    for row in rows:
        keys.extend(key for key in row if key not in keys)
    return keys


def _rows(output_schema, sample) -> tuple[str, list[str], list[str]] | None:
    """(data path, every field, the numeric fields) of the rows a result holds."""
    found = _object_rows_in_sample(_payload(sample)) if sample is not None else None
    if found is not None:
        path, rows = found
        keys = _keys_of_rows(rows)
        numeric = [
            key
            for key in keys
            if all(
                isinstance(row.get(key), int | float) and not isinstance(row.get(key), bool)
                for row in rows
                if row.get(key) is not None
            )
            and any(row.get(key) is not None for row in rows)
        ]
        return path, keys, numeric
    in_schema = _object_rows_in_schema(output_schema)
    if in_schema is not None:
        path, properties = in_schema
        keys = list(properties)
        numeric = [key for key in keys if _schema_type(properties[key]) in NUMBER_TYPES]
        return path, keys, numeric
    return None


def _record_keys(output_schema, sample) -> list[str]:
    data = _payload(sample) if sample is not None else None
    if isinstance(data, dict):
        return list(data)
    if isinstance(output_schema, dict):
        return list(output_schema.get("properties") or {})
    return []


def _rows_view(template: str, rows, chart_type: str) -> dict:
    """A table's or chart's fields from the rows found in the result (None: none found)."""
    if rows is None:
        return {"pageSize": 10} if template == "table" else {"chart": {"type": chart_type}}
    path, keys, numeric = rows
    view: dict = {"data": path} if path else {}
    if template == "table":
        view["columns"] = _columns(keys)
        view["pageSize"] = 10
    else:
        x = next((key for key in keys if key not in numeric), keys[0] if keys else "")
        view["chart"] = {"type": chart_type, "x": x, "y": [k for k in numeric if k != x]}
    return view


def generate_view(
    template: str,
    *,
    output_schema=None,
    sample=None,
    form_tool: str = "",
    chart_type: str = "line",
    title: str = "",
) -> dict:
    """A view of `template` fitted to the result's shape; a field it cannot work out is left
    for the person to fill in (the table then shows every field of the rows it receives)."""
    view: dict = {"template": template}
    if title:
        view["title"] = title
    if template in ("table", "chart"):
        view.update(_rows_view(template, _rows(output_schema, sample), chart_type))
    elif template == "card":
        keys = _record_keys(output_schema, sample)
        if keys:
            view["fields"] = _columns(keys)
    elif template == "form":
        view["tool"] = form_tool
        view["submitLabel"] = "Send"
    elif template == "html":
        view["html"] = STARTER_HTML
    return view
