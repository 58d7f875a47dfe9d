"""A view's document: tenant text (titles, labels, tool descriptions and schemas) stays data,
whatever it holds, and the SDK is put where the view's scripts find it."""

import json
from html.parser import HTMLParser

import pytest

from servers.views.document import custom_document, generated_document
from servers.views.sdk import SdkMissing, as_script

HOSTILE = '</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)> & "'


class Elements(HTMLParser):
    """What a browser's parser would make of the document: its elements and script texts."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self.title = ""
        self._in: str | None = None
        self._attrs: dict = {}

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag in ("script", "title"):
            self._in, self._attrs = tag, dict(attrs)
            if tag == "script":
                self.scripts.append((self._attrs, ""))

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)
        elif self._in == "title":
            self.title += data


def parse(text: str) -> Elements:
    parser = Elements()
    parser.feed(text)
    parser.close()
    return parser


def test_hostile_names_and_schemas_stay_inside_the_settings_block():
    view = {
        "template": "form",
        "title": HOSTILE,
        "tool": "create",
        "columns": [{"key": "k", "label": HOSTILE}],
    }
    form_tool = {
        "name": "create",
        "description": HOSTILE,
        "inputSchema": {"type": "object", "properties": {HOSTILE: {"title": HOSTILE}}},
    }
    head, tail = generated_document(view, form_tool, "fallback")
    parsed = parse(head + "/* sdk */" + tail)
    assert [attrs.get("type") for attrs, _ in parsed.scripts] == ["application/json", "module"]
    assert "img" not in parsed.tags
    assert parsed.title == HOSTILE  # the parser decodes the escaped title back to the text
    settings = json.loads(parsed.scripts[0][1])
    assert settings["title"] == HOSTILE
    assert settings["columns"][0]["label"] == HOSTILE
    assert settings["form"]["description"] == HOSTILE
    assert settings["form"]["inputSchema"]["properties"][HOSTILE] == {"title": HOSTILE}


def test_the_runtime_writes_no_markup():
    _, tail = generated_document({"template": "table"}, None, "t")
    assert "innerHTML" not in tail and "insertAdjacentHTML" not in tail
    assert "document.write" not in tail and "eval(" not in tail


def test_a_view_without_a_title_is_named_after_its_tool():
    head, _ = generated_document({"template": "card"}, None, "get_user")
    assert "<title>get_user</title>" in head
    assert '"title":"get_user"' in head


def test_custom_html_gets_the_sdk_first_in_its_head():
    head, tail = custom_document('<!doctype html><html><head><meta charset="utf-8"></head></html>')
    document = head + "SDK" + tail
    assert document.startswith('<!doctype html><html><head>\n<script type="module">\nSDK')
    assert "window.McpApps = McpApps;" in document
    assert document.index("window.McpApps") < document.index('<meta charset="utf-8">')
    bare_head, bare_tail = custom_document("<p>hi</p>")
    assert (bare_head + "SDK" + bare_tail).endswith("</script>\n<p>hi</p>")


def test_the_sdks_export_becomes_the_mcpapps_constant():
    script = as_script("class qB{};const x=1;export{qB as App,x};")
    assert script == "class qB{};const x=1;const McpApps={App:qB,x:x};"
    with pytest.raises(SdkMissing):
        as_script("no export here")
    with pytest.raises(SdkMissing):
        as_script("const a='</script>';export{a};")
