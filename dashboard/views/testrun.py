"""Test a tool once, from its page: sample arguments, the server's test secrets, and the
outbound request, raw response, MCP result and timing shown (servers.testrun does the work).
Disabled tools can be tested too: that is how imported drafts are checked before going live."""

import json

from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_http_methods

from accounts.policy import Action
from servers import kinds, secret_reach
from servers.testrun import DefinitionError, UnknownTool, test_run_sync

from ..scoping import server_or_404
from .base import DashboardRequest, authorize, dashboard_view, page


@dashboard_view
@require_http_methods(["GET", "POST"])
def tool_test(request: DashboardRequest, slug: str, pk: int):
    server = server_or_404(request, slug)
    tool = get_object_or_404(server.tools, pk=pk)
    if request.method == "GET":
        # What the kind reports (kind.reports_host_calls) decides the cards the page shows.
        context = {"server": server, "tool": tool, "kind": kinds.find_kind(tool.kind)}
        return page(request, "dashboard/parts/test.html", context)
    authorize(request, Action.SERVER_EDIT, org=server.organization)
    try:
        body = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, RecursionError):
        return JsonResponse({"error": {"message": "The request body must be JSON."}}, status=400)
    arguments = body.get("arguments", {}) if isinstance(body, dict) else None
    if not isinstance(arguments, dict):
        return JsonResponse({"error": {"message": "arguments must be a JSON object."}}, status=400)
    try:
        report = test_run_sync(server, tool.name, arguments, user=request.user)
    except (UnknownTool, DefinitionError) as exc:
        return JsonResponse({"error": {"message": str(exc)}}, status=400)
    except secret_reach.ReachNotApproved as exc:
        return JsonResponse({"error": {"message": str(exc)}}, status=403)
    return JsonResponse(report, json_dumps_params={"default": str})
