"""The playground page. It talks to the real /mcp/<slug> endpoint from the browser.

Credential: on the first call the page asks this view for a playground key: a real API key of
the organization, limited to this one server, valid for one hour, named after the user, its raw
value kept in the tab's sessionStorage. The login session remembers the key (sealed with the
vault's key, so the session store never holds it in clear), so another visit or another tab of
the same login gets the same key back instead of a new one; only a key that is gone, revoked or
about to expire is replaced, and replacing it revokes the user's earlier playground keys for the
server. Tasks are bound to the key that created them, so a stable key also keeps the user's
tasks reachable across visits. The user may paste any key instead.
"""

from datetime import datetime, timedelta
from typing import Any

from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_POST

from accounts.models import ApiKey
from accounts.policy import Action
from gateway.agents import explain
from servers.discovery.search import MAX_QUERY_CHARS
from servers.snapshot import DefinitionError, load_snapshot
from vault.crypto import SecretUnreadable, decrypt, encrypt

from ..scoping import server_or_404
from .base import authorize, dashboard_view, page
from .view_sandbox import view_host_installed

PLAYGROUND_KEY_TTL = timedelta(hours=1)
PLAYGROUND_PREFIX = "Playground · "
# A remembered key with less than this left is replaced, so a page never starts a session
# on a key that dies in the middle of it.
REUSE_MARGIN = timedelta(minutes=10)
SESSION_KEYS = "playground_keys"


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
            "view_host_installed": view_host_installed(),
            "discovery": _discovery(server, request.GET.get("discover", "").strip()),
        },
    )


def _discovery(server, query: str) -> dict | None:
    """What an agent sees in discovery mode, and how a search ranks (None: discovery is off
    for this server, or it cannot be served)."""
    try:
        snapshot = load_snapshot(server.slug)
    except DefinitionError:
        return None
    if snapshot is None or not explain.listing(snapshot=snapshot)["active"]:
        return None
    query = query[:MAX_QUERY_CHARS]
    view: dict[str, Any] = {"listing": explain.listing(snapshot=snapshot), "query": query}
    if query:
        view["search"] = explain.ranked(snapshot=snapshot, query=query)
    return view


def _remembered_key(request, server, user) -> tuple[ApiKey, str] | None:
    entry = request.session.get(SESSION_KEYS, {}).get(str(server.pk))
    if not entry:
        return None
    key = ApiKey.objects.filter(
        pk=entry.get("id"),
        organization=server.organization,
        created_by=user,
        servers=server,
        revoked_at=None,
        expires_at__gt=timezone.now() + REUSE_MARGIN,
    ).first()
    if key is None:
        return None
    try:
        return key, decrypt(entry["sealed"])
    except (SecretUnreadable, KeyError, TypeError):
        return None


def _remember_key(request, server, key: ApiKey, raw: str) -> None:
    kept = dict(request.session.get(SESSION_KEYS, {}))
    kept[str(server.pk)] = {"id": key.pk, "sealed": encrypt(raw)}
    request.session[SESSION_KEYS] = kept


def playground_key_for(request, server) -> tuple[ApiKey, str]:
    """The user's playground key for `server` in this login session: the remembered one while
    it is usable, else a new one (revoking the user's earlier playground keys for the server)."""
    remembered = _remembered_key(request, server, request.user)
    if remembered is not None:
        return remembered
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
    _remember_key(request, server, key, raw)
    return key, raw


@dashboard_view
@require_POST
def playground_key(request, slug):
    server = server_or_404(request, slug)
    authorize(request, Action.KEY_CREATE, org=server.organization)
    key, raw = playground_key_for(request, server)
    expires: datetime = key.expires_at
    response = JsonResponse({"key": raw, "name": key.name, "expires_at": expires.isoformat()})
    response["Cache-Control"] = "no-store"
    return response
