from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_http_methods, require_POST

from accounts.policy import Action
from dashboard.views.base import DashboardRequest

from ..forms.keys import ApiKeyForm
from ..snippets import client_setups
from .base import authorize, dashboard_view, page

# What the key-created page shows: a call with curl, Claude Code's command, a JSON config.
KEY_SNIPPETS = ["curl", "claude-code", "cursor"]


@dashboard_view
def key_list(request: DashboardRequest):
    keys = request.org.api_keys.select_related("created_by", "service_account")
    keys = keys.prefetch_related("servers")
    active = [k for k in keys.filter(revoked_at=None).order_by("-created_at")]
    revoked = keys.exclude(revoked_at=None).order_by("-revoked_at")[:20]
    accounts = list(request.org.service_accounts.order_by("name"))
    return page(
        request,
        "dashboard/keys/list.html",
        {"active": active, "revoked": revoked, "service_accounts": accounts},
    )


@dashboard_view
@require_http_methods(["GET", "POST"])
def key_create(request: DashboardRequest):
    authorize(request, Action.KEY_CREATE)
    form = ApiKeyForm(request.POST or None, organization=request.org)
    if request.method == "POST" and form.is_valid():
        key, raw = form.issue(request.user)
        # The raw key is rendered once, in this response, and never stored: so are the
        # snippets that carry it (for the first server the key opens).
        server = (
            key.servers.order_by("name").first() or request.org.servers.order_by("name").first()
        )
        setups = client_setups(server, key=raw) if server and server.accepts_api_key else []
        snippets = [s for s in setups if s["id"] in KEY_SNIPPETS]
        snippets.sort(key=lambda s: KEY_SNIPPETS.index(s["id"]))
        response = page(
            request,
            "dashboard/keys/created.html",
            {"key": key, "raw": raw, "snippet_server": server, "snippets": snippets},
        )
        response["Cache-Control"] = "no-store"
        return response
    initial_server = request.GET.get("server")
    if initial_server and not form.is_bound:
        form.initial["servers"] = list(
            request.org.servers.filter(slug=initial_server).values_list("pk", flat=True)
        )
    return page(request, "dashboard/keys/form.html", {"form": form})


@dashboard_view
@require_POST
def key_revoke(request: DashboardRequest, pk: int):
    key = get_object_or_404(request.org.api_keys, pk=pk, revoked_at=None)
    authorize(request, Action.KEY_MANAGE, obj=key)
    key.revoke()
    messages.success(
        request, f"Key “{key.name}” revoked. Clients using it are refused from now on."
    )
    return redirect("dashboard:key_list")
