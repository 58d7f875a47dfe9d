"""`{% code_editor_meta %}`: tells static/js/code-editor.js where Ace is, when `make assets`
installed it into static/vendor/ (gitignored). Without it nothing is rendered and every code
field stays a plain textarea, so a bare `pip install .` still has working forms."""

from django import template
from django.conf import settings
from django.templatetags.static import static
from django.utils.html import format_html

register = template.Library()

ACE = "vendor/ace/ace.js"


def code_editor_installed() -> bool:
    # Checked on every page rather than once, so `make assets` on a running server takes effect.
    return (settings.BASE_DIR / "static" / ACE).is_file()


@register.simple_tag
def code_editor_meta():
    if not code_editor_installed():
        return ""
    return format_html('<meta name="getmcp-code-editor" content="{}">', static("vendor/"))
