"""A tool that reads secrets, on its editor page: which secrets, whether an admin approved it as
it now stands, and the admins' "Approve" (servers/secret_reach.py holds the rule)."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from accounts.policy import Action
from servers import secret_reach
from servers.definition import export_definition

from ..scoping import server_or_404
from .base import DashboardRequest, authorize, dashboard_view


def reach_state(server, tool_name: str, user) -> dict | None:
    """For the editor: None when the tool reads no secret."""
    definition = export_definition(server)
    reach = secret_reach.reaches(definition, tool=tool_name)
    if not reach:
        return None
    waiting = secret_reach.pending(server, definition, tool=tool_name)
    return {
        "secrets": reach[0].secrets,
        "approved": not waiting,
        "may_approve": secret_reach.may_approve(user=user, server=server),
    }


def warn_if_waiting(request: DashboardRequest, server, tool_name: str) -> None:
    """After a save: a tool that now needs an approval its author cannot give, said at once."""
    state = reach_state(server, tool_name, request.user)
    if state and not state["approved"] and not state["may_approve"]:
        messages.warning(
            request,
            f"Tool “{tool_name}” reads the secrets {', '.join(state['secrets'])}: it test-runs "
            "and publishes once an admin or owner approves it as it now stands.",
        )


@dashboard_view
@require_POST
def tool_approve_secrets(request: DashboardRequest, slug: str, pk: int):
    server = server_or_404(request, slug)
    authorize(request, Action.SECRET_REACH, org=server.organization)
    tool = get_object_or_404(server.tools, pk=pk)
    definition = export_definition(server)
    waiting = secret_reach.pending(server, definition, tool=tool.name)
    secret_reach.approve(server=server, reaches_=waiting, user=request.user)
    if waiting:
        messages.success(
            request,
            f"Approved: “{tool.name}” may read {', '.join(waiting[0].secrets)} as it now stands.",
        )
    return redirect("dashboard:part_edit", slug=server.slug, part="tools", pk=tool.pk)
