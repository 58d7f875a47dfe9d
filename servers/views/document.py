"""The HTML document of a view. Nothing a tenant wrote or a tool returned is ever markup in it:
the settings travel as JSON in a data block (every `<`, `>` and `&` escaped, so no string can end
the block), the title is HTML-escaped, and the runtime writes every value with textContent.

A document is returned as (head, tail): the vendored SDK goes between them on each read, so the
500 kB bundle is held once per process rather than once per view."""

import html
import json
import re
from functools import lru_cache
from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"
_HEAD_TAG = re.compile(r"<head(\s[^>]*)?>", re.IGNORECASE)
_HTML_TAG = re.compile(r"<html(\s[^>]*)?>", re.IGNORECASE)
_SETTINGS = ("template", "title", "data", "columns", "pageSize", "fields", "chart", "submitLabel")


@lru_cache(maxsize=2)
def _runtime(name: str) -> str:
    return (RUNTIME_DIR / name).read_text(encoding="utf-8")


def json_for_script(value) -> str:
    """JSON that is safe inside a <script> element whatever its strings hold."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def view_settings(view: dict, form_tool: dict | None) -> dict:
    """What the runtime reads: the view's own settings, and for a form the tool it calls."""
    settings = {key: view[key] for key in _SETTINGS if key in view}
    if view.get("template") == "form" and form_tool is not None:
        settings["form"] = {
            "tool": form_tool.get("name", ""),
            "title": form_tool.get("title") or form_tool.get("name", ""),
            "description": form_tool.get("description") or "",
            "inputSchema": form_tool.get("inputSchema") or {"type": "object"},
        }
    return settings


def generated_document(view: dict, form_tool: dict | None, fallback_title: str) -> tuple[str, str]:
    title = view.get("title") or fallback_title
    settings = view_settings(view, form_tool)
    settings.setdefault("title", title)
    head = (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_runtime('view.css')}</style>\n</head>\n"
        '<body>\n<main id="view"><h1 id="view-title"></h1>'
        '<div id="view-body"><p class="muted">Waiting for the result…</p></div></main>\n'
        f'<script type="application/json" id="view-settings">{json_for_script(settings)}</script>\n'
        '<script type="module">\n'
    )
    tail = f"\n{_runtime('view.js')}\n</script>\n</body>\n</html>\n"
    return head, tail


def custom_document(source: str) -> tuple[str, str]:
    """A hand-written document, with the SDK put first so its module scripts find McpApps."""
    opening, closing = '<script type="module">\n', "\nwindow.McpApps = McpApps;\n</script>\n"
    for tag in (_HEAD_TAG, _HTML_TAG):
        match = tag.search(source)
        if match is not None:
            return source[: match.end()] + "\n" + opening, closing + source[match.end() :]
    return opening, closing + source
