"""The server's Doctor tab: a form (an optional key and Origin to test) and the report
(integrations/doctor does the work)."""

from django.views.decorators.http import require_http_methods

from accounts.policy import Action
from integrations.doctor.service import diagnose

from ..scoping import server_or_404
from .base import DashboardRequest, authorize, dashboard_view, page


@dashboard_view
@require_http_methods(["GET", "POST"])
def doctor(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    authorize(request, Action.VIEW, org=server.organization)
    report = None
    if request.method == "POST":
        # Running it creates a temporary key (or token) for the server: a member's action.
        authorize(request, Action.SERVER_EDIT, org=server.organization)
        report = diagnose(
            server=server,
            user=request.user,
            key=(request.POST.get("key") or "").strip() or None,
            origin=request.POST.get("origin"),
        )
    response = page(
        request,
        "dashboard/servers/doctor.html",
        {"server": server, "report": report, "origin": request.POST.get("origin", "")},
    )
    response["Cache-Control"] = "no-store"
    return response
