"""The live inspector page of a server (the socket does the rest: consumers.py)."""

from accounts.policy import Action
from dashboard.scoping import server_or_404
from dashboard.views.base import authorize, dashboard_view, page

from .events import REASONS


@dashboard_view
def inspector(request, slug):
    server = server_or_404(request, slug)
    authorize(request, Action.VIEW, org=server.organization)
    return page(
        request,
        "inspector/inspector.html",
        {"server": server, "tab": "inspector", "reasons": sorted(REASONS.items())},
    )
