"""Big servers on the server page: the tool list's search, filters and pages, and the bulk
enable / disable / delete form (deleting asks for a confirmation first). The rules live in
servers.bulk; the role check is accounts.policy's, through `authorize`."""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.http import HttpRequest
from django.shortcuts import redirect
from django.template.defaultfilters import pluralize
from django.views.decorators.http import require_POST

from accounts.policy import Action
from servers.bulk import BulkAction, ToolFilter, ToolState, apply_bulk, tool_kinds, tools_matching

from ..scoping import server_or_404
from .base import DashboardRequest, authorize, dashboard_view, page

TOOLS_PER_PAGE = 50
# What a finished bulk action says, by action.
DONE = {BulkAction.ENABLE: "Enabled", BulkAction.DISABLE: "Disabled", BulkAction.DELETE: "Deleted"}


def tool_filter(data) -> ToolFilter:
    """The filter a GET query or the bulk form carries (unknown values match everything)."""
    state = data.get("state", "")
    return ToolFilter(
        text=data.get("q", "").strip()[:200],
        state=ToolState(state) if state in ToolState._value2member_map_ else ToolState.ANY,
        kind=data.get("kind", "").strip()[:20],
    )


def filter_query(match: ToolFilter) -> str:
    """The filter as a query string, for page links and the way back after a bulk action."""
    pairs = {"q": match.text, "state": match.state.value, "kind": match.kind}
    return urlencode({k: v for k, v in pairs.items() if v})


def tool_list_context(request: HttpRequest, server) -> dict:
    """What the server page needs to show one page of the (filtered) tools."""
    match = tool_filter(request.GET)
    matching = tools_matching(server=server, match=match)
    tools: Page = Paginator(matching, TOOLS_PER_PAGE).get_page(request.GET.get("page"))
    rows = list(tools.object_list)
    for i, row in enumerate(rows):  # the move buttons: the ends of the whole list, not the page
        row.first_of_all = i == 0 and not tools.has_previous()
        row.last_of_all = i == len(rows) - 1 and not tools.has_next()
    tools.object_list = rows
    return {
        "tools": tools,
        "tool_match": match,
        "tool_query": filter_query(match),
        "tool_kinds": tool_kinds(server=server),
        "tool_total": server.tools.count(),
        "tool_states": [(s.value, s.name.capitalize()) for s in ToolState if s.value],
    }


@dashboard_view
@require_POST
def tools_bulk(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_EDIT, org=server.organization)
    match = tool_filter(request.POST)
    back = f"/servers/{server.slug}/?{filter_query(match)}#tools"
    try:
        action = BulkAction(request.POST.get("action", ""))
    except ValueError:
        messages.error(request, "Choose Enable, Disable or Delete.")
        return redirect(back)
    scope = request.POST.get("scope", "selected")
    if scope == "matching":
        tools = tools_matching(server=server, match=match)
    else:
        ids = [int(i) for i in request.POST.getlist("ids") if i.isdigit()]
        tools = server.tools.filter(pk__in=ids)
    count = tools.count()
    if not count:
        messages.error(request, "No tool selected: tick some tools, or choose all matching.")
        return redirect(back)
    if action == BulkAction.DELETE and request.POST.get("confirm") != "yes":
        return page(
            request,
            "dashboard/servers/bulk_confirm.html",
            {
                "server": server,
                "action": action,
                "scope": scope,
                "count": count,
                "names": list(tools.order_by("position", "id").values_list("name", flat=True)[:20]),
                "ids": list(tools.values_list("pk", flat=True)) if scope != "matching" else [],
                "tool_match": match,
                "back": back,
            },
        )
    changed = apply_bulk(server=server, tools=tools, action=action)
    text = f"{DONE[action]} {len(changed)} tool{pluralize(len(changed))}."
    if len(changed) < count:
        left = count - len(changed)
        text += f" {left} {pluralize(left, 'was,were')} already {action.value}d."
    if changed and server.versions.exists():
        text += " Publish a new version to make it live."
    messages.success(request, text)
    return redirect(back)
