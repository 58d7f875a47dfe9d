from django.contrib import messages
from django.views.decorators.http import require_http_methods

from accounts.models import ApiKey
from oauth.metadata import resource_metadata_url

from ..scoping import server_or_404
from ..snippets import KEY_PLACEHOLDER, client_setups, endpoint_url
from .base import DashboardRequest, dashboard_view, page


@dashboard_view
@require_http_methods(["GET", "POST"])
def connect(request: DashboardRequest, slug: str):
    """Set-up snippets. A POST creates a key limited to this server and fills it in, once."""
    server = server_or_404(request, slug)
    raw = None
    if request.method == "POST":
        name = (request.POST.get("name") or "").strip()[:100] or f"{server.slug} connect"
        _, raw = ApiKey.issue(server.organization, name, servers=[server], created_by=request.user)
        messages.success(request, f"Key “{name}” created and filled in below. Copy it now.")
    keys = [
        k
        for k in server.organization.api_keys.filter(revoked_at=None).prefetch_related("servers")
        if k.is_active and k.allows(server)
    ]
    response = page(
        request,
        "dashboard/servers/connect.html",
        {
            "server": server,
            "url": endpoint_url(server),
            "setups": client_setups(server, raw),
            "keys": keys,
            "raw": raw,
            "placeholder": KEY_PLACEHOLDER,
            "oauth_metadata_url": resource_metadata_url(server.slug),
        },
    )
    if raw:
        response["Cache-Control"] = "no-store"
    return response
