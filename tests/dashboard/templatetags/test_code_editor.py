"""Code fields are marked for the editor, and Ace is announced only when `make assets` put it
in static/vendor/, so a bare `pip install .` keeps plain, working textareas."""

from pathlib import Path

from dashboard.templatetags.code_editor import code_editor_meta


def test_without_the_vendored_editor_no_page_asks_for_it(settings, tmp_path):
    settings.BASE_DIR = tmp_path
    assert code_editor_meta() == ""


def test_with_the_vendored_editor_pages_say_where_it_is(settings, tmp_path):
    settings.BASE_DIR = tmp_path
    ace = tmp_path / "static" / "vendor" / "ace" / "ace.js"
    ace.parent.mkdir(parents=True)
    ace.write_text("/* ace */")
    assert code_editor_meta() == '<meta name="getmcp-code-editor" content="/static/vendor/">'


def test_the_vendored_editor_is_not_committed():
    root = Path(__file__).resolve().parents[3]
    assert "/static/vendor/" in (root / ".gitignore").read_text().splitlines()
