"""The `view` of a tool: its fields and every problem a view can have, named by path."""

import re

# The extension's type, as servers.compiled.features names it (the compiler imports this package).
APP_MIME_TYPE = "text/html;profile=mcp-app"
TEMPLATES = ("table", "card", "chart", "form", "html")
CHART_TYPES = ("line", "bar")
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
FIELDS = frozenset(
    {
        "template",
        "title",
        "data",
        "columns",
        "pageSize",
        "fields",
        "chart",
        "tool",
        "submitLabel",
        "html",
        "csp",
        "permissions",
        "prefersBorder",
        "domain",
    }
)
MAX_HTML = 200_000
MAX_PAGE_SIZE = 500
MAX_COLUMNS = 50
# An origin a policy may name: a scheme, a host (its first label may be `*`), an optional port.
# Nothing that could end a CSP directive or add a keyword (`;`, quotes, spaces) gets through.
ORIGIN = re.compile(r"^(https|wss|http|ws)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$")
_KEY = re.compile(r"^[^\s]{1,200}$")
_DOMAIN = re.compile(r"^[A-Za-z0-9.-]{1,253}$")


def _columns(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, list):
        problems.append(f"{path}: must be a list of {{key, label}}")
        return
    if len(value) > MAX_COLUMNS:
        problems.append(f"{path}: at most {MAX_COLUMNS} entries")
    for index, column in enumerate(value):
        where = f"{path}[{index}]"
        if not isinstance(column, dict):
            problems.append(f"{where}: must be a mapping with key and label")
            continue
        unknown = sorted(set(column) - {"key", "label"})
        if unknown:
            problems.append(f"{where}.{unknown[0]}: unknown field")
        if not isinstance(column.get("key"), str) or not _KEY.match(column["key"]):
            problems.append(f"{where}.key: must be a field name (no spaces)")
        if "label" in column and not isinstance(column["label"], str):
            problems.append(f"{where}.label: must be a string")


def _csp(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f"{path}: must be a mapping of {', '.join(CSP_KEYS)}")
        return
    for key in sorted(set(value) - set(CSP_KEYS)):
        problems.append(f"{path}.{key}: unknown field (known: {', '.join(CSP_KEYS)})")
    for key in CSP_KEYS:
        origins = value.get(key, [])
        if not isinstance(origins, list):
            problems.append(f"{path}.{key}: must be a list of origins")
            continue
        for index, origin in enumerate(origins):
            if not isinstance(origin, str) or not ORIGIN.match(origin):
                problems.append(
                    f"{path}.{key}[{index}]: must be an origin like https://api.example.com "
                    "(a scheme and a host, no path)"
                )


def _permissions(value, path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f"{path}: must be a mapping of {', '.join(PERMISSIONS)}")
        return
    for key, granted in value.items():
        if key not in PERMISSIONS:
            problems.append(f"{path}.{key}: unknown permission (known: {', '.join(PERMISSIONS)})")
        elif granted != {}:
            problems.append(f"{path}.{key}: must be {{}} (requested) or left out")


def _template_fields(view: dict, path: str, problems: list[str], tool_names) -> None:
    template = view["template"]
    if template == "html" and not (isinstance(view.get("html"), str) and view["html"].strip()):
        problems.append(f"{path}.html: required for the html template")
    if isinstance(view.get("html"), str) and len(view["html"]) > MAX_HTML:
        problems.append(f"{path}.html: at most {MAX_HTML} characters")
    if template == "form":
        _form_tool(view.get("tool"), f"{path}.tool", problems, tool_names)
    if "chart" in view:
        _chart(view["chart"], f"{path}.chart", problems)


def _form_tool(tool, path: str, problems: list[str], tool_names) -> None:
    if not isinstance(tool, str) or not tool:
        problems.append(f"{path}: the form's tool is required")
    elif tool_names is not None and tool not in tool_names:
        problems.append(f"{path}: no tool {tool!r} in this server")


def _chart(chart, path: str, problems: list[str]) -> None:
    if not isinstance(chart, dict):
        problems.append(f"{path}: must be a mapping of type, x and y")
        return
    for key in sorted(set(chart) - {"type", "x", "y"}):
        problems.append(f"{path}.{key}: unknown field")
    if chart.get("type", "line") not in CHART_TYPES:
        problems.append(f"{path}.type: must be line or bar")
    if "x" in chart and not isinstance(chart["x"], str):
        problems.append(f"{path}.x: must be a field name")
    y = chart.get("y", [])
    if not isinstance(y, list) or not all(isinstance(key, str) for key in y):
        problems.append(f"{path}.y: must be a list of field names")


def _scalars(view: dict, path: str, problems: list[str]) -> None:
    for key in ("title", "data", "tool", "submitLabel", "html", "domain"):
        if key in view and not isinstance(view[key], str):
            problems.append(f"{path}.{key}: must be a string")
    if isinstance(view.get("domain"), str) and view["domain"] and not _DOMAIN.match(view["domain"]):
        problems.append(f"{path}.domain: must be a host name")
    for key in ("columns", "fields"):
        if key in view:
            _columns(view[key], f"{path}.{key}", problems)
    if "pageSize" in view:
        size = view["pageSize"]
        if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= MAX_PAGE_SIZE:
            problems.append(f"{path}.pageSize: must be a whole number from 1 to {MAX_PAGE_SIZE}")
    if "prefersBorder" in view and not isinstance(view["prefersBorder"], bool):
        problems.append(f"{path}.prefersBorder: must be true or false")


def view_problems(view, path: str = "view", tool_names=None) -> list[str]:
    """Every problem of a tool's `view`; `tool_names`: the server's tools (for a form's tool)."""
    if view in (None, {}):
        return []
    if not isinstance(view, dict):
        return [f"{path}: must be a mapping"]
    problems = [f"{path}.{key}: unknown field" for key in sorted(set(view) - FIELDS)]
    if view.get("template") not in TEMPLATES:
        problems.append(f"{path}.template: must be one of {', '.join(TEMPLATES)}")
        return problems
    _scalars(view, path, problems)
    if "csp" in view:
        _csp(view["csp"], f"{path}.csp", problems)
    if "permissions" in view:
        _permissions(view["permissions"], f"{path}.permissions", problems)
    if not problems:
        _template_fields(view, path, problems, tool_names)
    return problems
