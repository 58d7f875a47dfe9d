"""The playground page. It talks to the real /mcp/<slug> endpoint from the browser.

Credential: on the first call the page asks this view for a playground key: a real API key of
the organization, limited to this one server, valid for one hour, named after the user, its raw
value kept in the tab's sessionStorage only. Minting a new one revokes the user's earlier
playground keys for the server, so they never pile up. The user may paste any key instead.
"""

from datetime import timedelta

from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_POST

from accounts.models import ApiKey
from accounts.policy import Action

from ..scoping import server_or_404
from .base import authorize, dashboard_view, page

PLAYGROUND_KEY_TTL = timedelta(hours=1)
PLAYGROUND_PREFIX = "Playground · "


@dashboard_view
def playground(request, slug):
    server = server_or_404(request, slug)
    return page(
        request,
        "dashboard/servers/playground.html",
        {
            "server": server,
            "endpoint": f"/mcp/{server.slug}",
            "needs_key": server.auth_mode != "none",
        },
    )


@dashboard_view
@require_POST
def playground_key(request, slug):
    server = server_or_404(request, slug)
    authorize(request, Action.KEY_CREATE, org=server.organization)
    earlier = ApiKey.objects.filter(
        organization=server.organization,
        created_by=request.user,
        name__startswith=PLAYGROUND_PREFIX,
        servers=server,
        revoked_at=None,
    )
    for key in earlier:
        key.revoke()
    expires = timezone.now() + PLAYGROUND_KEY_TTL
    name = f"{PLAYGROUND_PREFIX}{request.user.email}"[:100]
    key, raw = ApiKey.issue(
        server.organization, name, servers=[server], expires_at=expires, created_by=request.user
    )
    response = JsonResponse({"key": raw, "name": key.name, "expires_at": expires.isoformat()})
    response["Cache-Control"] = "no-store"
    return response
