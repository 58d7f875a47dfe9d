"""A server's MCP tasks for people: what runs, who started it, and a Cancel button.

Tasks are read for the server the membership check found, never by id alone, so a task of
another organization answers 404. Who started a task is read from its credential ("key:<id>",
or "anon" on a server without keys): the key's name and the user who made it."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.http import require_POST

from accounts.models import ApiKey
from accounts.policy import Action
from mcp_protocol.versions import STATELESS
from mcptasks import lifecycle
from mcptasks.models import Task

from ..scoping import server_or_404
from .base import DashboardRequest, authorize, dashboard_view, page

PAGE_SIZE = 50
ACTIVE = "active"
STATUS_FILTERS = [(ACTIVE, "Running or waiting"), *Task.STATUSES]


def _starters(tasks) -> dict[str, dict]:
    """credential -> {"key": name, "user": email} for the tasks on one page."""
    ids = set()
    for task in tasks:
        kind, _, ident = task.credential.partition(":")
        if kind == "key" and ident.isdigit():
            ids.add(int(ident))
    keys = ApiKey.objects.filter(pk__in=ids).select_related("created_by")
    found = {
        f"key:{key.pk}": {"key": key.name, "user": key.created_by.email if key.created_by else ""}
        for key in keys
    }
    found["anon"] = {"key": "", "user": ""}
    return found


def _tasks(server, status: str):
    tasks = Task.objects.filter(server=server, expires_at__gt=timezone.now())
    if status == ACTIVE:
        tasks = tasks.exclude(status__in=Task.TERMINAL)
    elif status in dict(Task.STATUSES):
        tasks = tasks.filter(status=status)
    return tasks.order_by("-created_at", "id")


@dashboard_view
def task_list(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    status = request.GET.get("status", "")
    page_obj = Paginator(_tasks(server, status), PAGE_SIZE).get_page(request.GET.get("page"))
    starters = _starters(page_obj.object_list)
    rows = [
        (task, starters.get(task.credential, {"key": "(deleted key)", "user": ""}))
        for task in page_obj.object_list
    ]
    return page(
        request,
        "dashboard/servers/tasks.html",
        {
            "server": server,
            "rows": rows,
            "tasks": page_obj,
            "status": status,
            "status_filters": STATUS_FILTERS,
            "task_tools": server.tools.exclude(execution={}).order_by("name"),
        },
    )


@dashboard_view
@require_POST
def task_cancel(request: DashboardRequest, slug: str, task_id):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_EDIT, org=server.organization)
    task = get_object_or_404(Task, pk=task_id, server=server)
    if task.is_terminal:
        messages.info(request, f"Task {task.id[:8]}… had already ended ({task.status}).")
    else:
        # The extension-era semantics: cancelling is idempotent, never an error for people.
        lifecycle.cancel_task(task, STATELESS, message="Cancelled from the dashboard.")
        messages.success(request, f"Task {task.id[:8]}… of {task.tool_name} cancelled.")
    back = request.POST.get("status", "")
    url = redirect("dashboard:task_list", slug=server.slug).url
    return redirect(f"{url}?status={back}" if back else url)
