"""The command palette's search (Ctrl-K or "/" on any dashboard page): servers and tools of the
current organization, as JSON. The organization is the session's, checked by accounts.policy;
another organization's names never come back, whatever is typed."""

from django.http import JsonResponse
from django.urls import reverse

from accounts.policy import Action
from servers.lookup import find_in_organization

from .base import DashboardRequest, authorize, dashboard_view


@dashboard_view
def palette_search(request: DashboardRequest):
    authorize(request, Action.VIEW)
    found = find_in_organization(organization=request.org, text=request.GET.get("q", ""))
    results = []
    for item in found:
        if item.kind == "server":
            url = reverse("dashboard:server_detail", args=[item.server_slug])
        else:
            url = reverse("dashboard:part_edit", args=[item.server_slug, "tools", item.pk])
        results.append({"kind": item.kind, "name": item.name, "detail": item.detail, "url": url})
    response = JsonResponse({"organization": request.org.name, "results": results})
    response["Cache-Control"] = "no-store"
    return response
