"""The sandbox proxy of the playground's view preview (the MCP Apps host side; see
static/js/view-host.js). The playground frames this page with `sandbox="allow-scripts"`, so it
runs in an opaque origin of its own, apart from the dashboard's cookies and DOM; it frames the
view in turn and relays messages between it and the playground.

The view's declared policy (`?csp=`, the resource's `_meta.ui.csp`) becomes this response's
Content-Security-Policy header, which the view's frame (a srcdoc document) inherits: an origin the
view did not declare cannot be reached, whatever its script tries.

The page is not a dashboard page, so it is no template under templates/ (where no inline code is
allowed, tests/dashboard/test_csp.py): its relay is an inline script because the policy it
carries must allow the view's own inline scripts, and a nonce or hash would turn those off."""

import json
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.http import HttpResponse, HttpResponseBadRequest
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET

from servers.views.policy import content_security_policy

MAX_CSP_PARAM = 8_000
PROXY_PAGE = Path(__file__).resolve().parents[1] / "sandbox" / "proxy.html"
HOST_SIDE = settings.BASE_DIR / "static" / "vendor" / "ext-apps" / "app-bridge.js"


def view_host_installed() -> bool:
    """Whether `make assets` installed the SDK's host side (checked per page, like Ace)."""
    return HOST_SIDE.is_file()


@lru_cache(maxsize=1)
def _proxy_page() -> str:
    return PROXY_PAGE.read_text(encoding="utf-8")


@require_GET
@xframe_options_sameorigin
def view_sandbox(request):
    raw = request.GET.get("csp") or "{}"
    if len(raw) > MAX_CSP_PARAM:
        return HttpResponseBadRequest("csp: too long")
    try:
        csp = json.loads(raw)
    except ValueError:
        return HttpResponseBadRequest("csp: not JSON")
    response = HttpResponse(_proxy_page())
    response["Content-Security-Policy"] = content_security_policy(csp)
    response["Referrer-Policy"] = "same-origin"
    response["Cache-Control"] = "no-store"
    return response
