"""The dashboard's upstream pages: adding tools from an upstream MCP server (SERVER_EDIT, like
any draft tool: list what it offers, pick, create), and the Upstream changes tab: held upstream
changes with their diff, approve and reject (SERVER_PUBLISH: what a server serves is a member's
to decide, like publishing), and the server's auto-approve setting (SERVER_SETTINGS)."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.policy import Action
from servers import secret_reach
from servers.models import Server, UpstreamReview
from servers.upstream import pinning
from servers.upstream.adding import add_upstream_tools, discover
from servers.upstream.connection import UpstreamUnreachable
from servers.upstream.sync import server_upstreams
from servers.upstream.target import UpstreamError

from ..forms.upstream import UpstreamForm
from ..scoping import server_or_404
from .base import DashboardRequest, authorize, dashboard_view, page


@dashboard_view
@require_http_methods(["GET", "POST"])
def add_tools(request, slug):
    """Step "list" shows what the upstream offers; step "add" creates the ticked tools."""
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_EDIT, org=server.organization)
    form = UpstreamForm(request.POST or None, initial=request.GET.dict())
    context = {"server": server, "form": form, "upstreams": server_upstreams(server)}
    if request.method == "GET" or not form.is_valid():
        status = 400 if form.is_bound else 200
        return page(request, "upstream/add_tools.html", context, status=status)
    connection = form.connection()
    try:
        secret_reach.require_may_send(
            server=server, headers=connection.get("headers"), user=request.user
        )
        if request.POST.get("step") == "add":
            selected = request.POST.getlist("tool")
            if not selected:
                raise UpstreamError("Tick at least one tool.")
            tools = add_upstream_tools(server, **connection, selected=selected)
            secret_reach.approve_added(server=server, tools=tools, user=request.user)
            names = ", ".join(tool.name for tool in tools)
            messages.success(request, f"Added {len(tools)} upstream tool(s): {names}.")
            return redirect(f"/servers/{server.slug}/#tools")
        context["offered"] = discover(server, **connection)
        context["taken"] = set(server.tools.values_list("name", flat=True))
    except UpstreamUnreachable as exc:
        context["error"] = f"The upstream cannot be reached: {exc.reason}"
    except (UpstreamError, secret_reach.ReachNotApproved) as exc:
        context["error"] = str(exc)
    status = 400 if "error" in context else 200
    return page(request, "upstream/add_tools.html", context, status=status)


@require_GET
@dashboard_view
def reviews(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    authorize(request, Action.VIEW, org=server.organization)
    held = [
        {"review": review, "fields": pinning.changed_fields(review)}
        for review in pinning.open_reviews(server)
    ]
    decided = server.upstream_reviews.exclude(state=UpstreamReview.PENDING)[:20]
    return page(
        request,
        "upstream/reviews.html",
        {"server": server, "tab": "upstream", "held": held, "decided": decided},
    )


def _review(request: DashboardRequest, slug: str, pk: int) -> tuple[Server, UpstreamReview]:
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_PUBLISH, org=server.organization)
    return server, get_object_or_404(UpstreamReview, pk=pk, server=server)


@require_POST
@dashboard_view
def review_approve(request: DashboardRequest, slug: str, pk: int):
    server, review = _review(request, slug, pk)
    try:
        pinning.approve(review, user=request.user)
    except pinning.ReviewError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request, f"Approved: {review.upstream_name} now serves the upstream's definition."
        )
    return redirect("upstream:reviews", slug=server.slug)


@require_POST
@dashboard_view
def review_reject(request: DashboardRequest, slug: str, pk: int):
    server, review = _review(request, slug, pk)
    try:
        pinning.reject(review, user=request.user)
    except pinning.ReviewError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request, f"Rejected: {review.upstream_name} keeps its approved definition."
        )
    return redirect("upstream:reviews", slug=server.slug)


@require_POST
@dashboard_view
def auto_approve(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_SETTINGS, org=server.organization)
    server.upstream_auto_approve = request.POST.get("auto_approve") == "on"
    server.save(update_fields=["upstream_auto_approve", "updated_at"])
    messages.success(
        request,
        "Upstream changes are now taken at once."
        if server.upstream_auto_approve
        else "Upstream changes now wait for approval.",
    )
    return redirect("upstream:reviews", slug=server.slug)
