"""The dashboard's Upstream changes tab: held upstream changes with their diff, approve and
reject (SERVER_PUBLISH: what a server serves is a member's to decide, like publishing), and the
server's auto-approve setting (SERVER_SETTINGS)."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_POST

from accounts.policy import Action
from servers.models import Server, UpstreamReview
from servers.upstream import pinning

from ..scoping import server_or_404
from .base import DashboardRequest, authorize, dashboard_view, page


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
