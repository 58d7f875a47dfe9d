"""Published versions of a server: publish the draft, see what changed, roll back.

Once a server has a published version, clients get that version, not the draft the editors
change; this page (and the banner on the server page) is where the draft goes live."""

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods, require_POST

from accounts.policy import Action
from servers import publishing
from servers.definition import template_name_problems

from ..scoping import server_or_404
from .base import DashboardRequest, authorize, dashboard_view, page


def pending_changes(server) -> tuple[object, list[str]]:
    """(latest published version or None, what publishing the draft would change)."""
    return publishing.unpublished_changes(server)


@dashboard_view
@require_http_methods(["GET", "POST"])
def version_list(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    error = None
    if request.method == "POST":
        authorize(request, Action.SERVER_PUBLISH, org=server.organization)
        wanted = (request.POST.get("version") or "").strip() or None
        try:
            published = publishing.publish(server, wanted, user=request.user)
        except publishing.PublishError as exc:
            error = str(exc).removeprefix("version: ")
        else:
            messages.success(request, f"Published {published.version}: clients get it now.")
            for problem in template_name_problems(published.definition):
                messages.warning(request, f"Template check: {problem}")
            return redirect("dashboard:version_list", slug=server.slug)
    newest, changes = pending_changes(server)
    return page(
        request,
        "dashboard/servers/versions.html",
        {
            "server": server,
            "versions": publishing.versions(server),
            "newest": newest,
            "changes": changes,
            "next_version": publishing.next_version(server),
            "error": error,
        },
        status=400 if error else 200,
    )


@dashboard_view
@require_POST
def version_rollback(request: DashboardRequest, slug: str, version):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_PUBLISH, org=server.organization)
    try:
        published = publishing.rollback(server, version, user=request.user)
    except publishing.PublishError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Rolled back: {published.version} serves what {version} served.")
    return redirect("dashboard:version_list", slug=server.slug)
