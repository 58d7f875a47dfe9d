from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect
from django.template.defaultfilters import pluralize
from django.views.decorators.http import require_http_methods, require_POST

from accounts.models import ApiKey
from accounts.policy import Action
from dashboard.views.base import DashboardRequest
from servers.models import Server

from .. import stats
from ..forms.servers import ServerForm
from ..scoping import server_or_404
from .base import authorize, dashboard_view, page
from .bulk import tool_list_context
from .versions import pending_changes


@dashboard_view
def home(request: DashboardRequest):
    return redirect("dashboard:server_list")


@dashboard_view
def server_list(request: DashboardRequest):
    servers = list(request.org.servers.order_by("name"))
    today = stats.calls_today(request.org, servers)
    rows = [(server, today.get(server.pk, 0)) for server in servers]
    return page(request, "dashboard/servers/list.html", {"rows": rows})


@dashboard_view
@require_http_methods(["GET", "POST"])
def server_create(request: DashboardRequest):
    authorize(request, Action.SERVER_CREATE)
    form = ServerForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        server = form.save(commit=False)
        server.organization = request.org
        server.save()
        messages.success(request, f"Server “{server.name}” created. Add a tool to get started.")
        return redirect("dashboard:server_detail", slug=server.slug)
    return page(request, "dashboard/servers/form.html", {"form": form, "creating": True})


@dashboard_view
def server_detail(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    return page(
        request,
        "dashboard/servers/detail.html",
        {
            "server": server,
            **tool_list_context(request, server),
            "resources": server.resources.all(),
            "templates": server.resource_templates.all(),
            "prompts": server.prompts.all(),
            "published": pending_changes(server),
            "calls_today": stats.calls_today(server.organization, [server]).get(server.pk, 0),
        },
    )


@dashboard_view
@require_http_methods(["GET", "POST"])
def server_settings(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    if request.method == "POST":
        authorize(request, Action.SERVER_SETTINGS, org=server.organization)
    form = ServerForm(request.POST or None, instance=server)
    if request.method == "POST" and form.is_valid():
        server = form.save()
        messages.success(request, "Settings saved.")
        return redirect("dashboard:server_settings", slug=server.slug)
    return page(request, "dashboard/servers/form.html", {"form": form, "server": server})


@dashboard_view
@require_http_methods(["GET", "POST"])
def server_delete(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_DELETE, org=server.organization)
    if request.method == "POST":
        if request.POST.get("confirm_slug") != server.slug:
            return page(
                request, "dashboard/servers/delete.html", {"server": server, "wrong": True}, 400
            )
        name = server.name
        with transaction.atomic():
            revoked = ApiKey.revoke_keys_only_for(server)
            server.delete()
        text = f"Server “{name}” deleted."
        if revoked:
            were = pluralize(revoked, "was,were")
            text += f" {revoked} key{pluralize(revoked)} limited to it {were} revoked."
        messages.success(request, text)
        return redirect("dashboard:server_list")
    return page(request, "dashboard/servers/delete.html", {"server": server})


@dashboard_view
@require_POST
def server_status(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_STATUS, org=server.organization)
    status = request.POST.get("status")
    if status in dict(Server.STATUSES):
        server.status = status
        server.save(update_fields=["status", "updated_at"])
        messages.success(request, f"Server is now {server.get_status_display().lower()}.")
    return redirect("dashboard:server_detail", slug=server.slug)
