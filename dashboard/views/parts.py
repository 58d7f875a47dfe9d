"""Create, edit, delete, enable/disable and reorder the parts of a server
(tools, resources, resource templates, prompts), one set of views for all four."""

from dataclasses import dataclass

from django.contrib import messages
from django.forms import ModelForm
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_http_methods, require_POST

from accounts.policy import Action
from servers import destination_checks, kinds, parts
from servers.models import Prompt, Resource, ResourceTemplate, Tool

from ..forms.parts import PromptForm, ResourceForm, ResourceTemplateForm
from ..forms.tools import ToolForm
from ..scoping import server_or_404
from .base import authorize, dashboard_view, page
from .secret_reach import reach_state, warn_if_waiting


@dataclass(frozen=True)
class PartType:
    model: type
    form: type[ModelForm]
    related: str  # the related name on Server
    singular: str
    anchor: str  # the section of the server page listing them


PART_TYPES = {
    "tools": PartType(Tool, ToolForm, "tools", "tool", "tools"),
    "resources": PartType(Resource, ResourceForm, "resources", "resource", "resources"),
    "templates": PartType(
        ResourceTemplate,
        ResourceTemplateForm,
        "resource_templates",
        "resource template",
        "templates",
    ),
    "prompts": PartType(Prompt, PromptForm, "prompts", "prompt", "prompts"),
}


def _part_type(part: str) -> PartType:
    try:
        return PART_TYPES[part]
    except KeyError:
        raise Http404("No such part.") from None


def _row(server, part_type: PartType, pk: int):
    return get_object_or_404(getattr(server, part_type.related), pk=pk)


def _changed(request, server, text: str) -> None:
    """A success message that says when the change waits for a publish to reach clients."""
    if server.versions.exists():
        text += " Publish a new version to make it live."
    messages.success(request, text)


def _warn_about_destinations(request, server, part: str, row) -> None:
    """A saved tool whose URL the outbound guard will refuse: said now, not at the first call."""
    if part != "tools":
        return
    tool = {"kind": row.kind, "config": row.config}
    for warning in destination_checks.tool_warnings(tool, server):
        messages.warning(request, f"Tool “{row.name}”: {warning}")


def _back(server, part_type: PartType):
    return redirect(f"/servers/{server.slug}/#{part_type.anchor}")


def _editor(request, server, part, part_type, form, row=None):
    context = {
        "server": server,
        "form": form,
        "part": part,
        "part_type": part_type,
        "row": row,
        # Each kind's starting config, put in the editor when the kind changes and the config
        # is empty; and the kinds with fields of their own, whose templates the form includes.
        "kind_examples": {kind.name: dict(kind.config_example) for kind in kinds.KINDS.values()},
        "kind_forms": [kind for kind in kinds.KINDS.values() if kind.form_template],
        "secret_reach": (
            reach_state(server, row.name, request.user) if part == "tools" and row else None
        ),
    }
    template = "dashboard/parts/tool_form.html" if part == "tools" else "dashboard/parts/form.html"
    status = 400 if form.is_bound and form.errors else 200
    return page(request, template, context, status)


@dashboard_view
@require_http_methods(["GET", "POST"])
def part_create(request, slug, part):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_EDIT, org=server.organization)
    part_type = _part_type(part)
    form = part_type.form(request.POST or None, server=server)
    if request.method == "POST" and form.is_valid():
        row = form.save()
        _changed(request, server, f"{part_type.singular.capitalize()} “{row.name}” created.")
        _warn_about_destinations(request, server, part, row)
        if part == "tools":
            warn_if_waiting(request, server, row.name)
        return _back(server, part_type)
    return _editor(request, server, part, part_type, form)


@dashboard_view
@require_http_methods(["GET", "POST"])
def part_edit(request, slug, part, pk):
    server = server_or_404(request, slug)
    part_type = _part_type(part)
    row = _row(server, part_type, pk)
    if request.method == "POST":
        authorize(request, Action.SERVER_EDIT, org=server.organization)
    form = part_type.form(request.POST or None, instance=row, server=server)
    if request.method == "POST" and form.is_valid():
        row = form.save()
        _changed(request, server, f"{part_type.singular.capitalize()} “{row.name}” saved.")
        _warn_about_destinations(request, server, part, row)
        if part == "tools":
            warn_if_waiting(request, server, row.name)
        return _back(server, part_type)
    return _editor(request, server, part, part_type, form, row)


@dashboard_view
@require_http_methods(["GET", "POST"])
def part_delete(request, slug, part, pk):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_EDIT, org=server.organization)
    part_type = _part_type(part)
    row = _row(server, part_type, pk)
    if request.method == "POST":
        row.delete()
        _changed(request, server, f"{part_type.singular.capitalize()} “{row.name}” deleted.")
        return _back(server, part_type)
    return page(
        request,
        "dashboard/parts/delete.html",
        {"server": server, "row": row, "part": part, "part_type": part_type},
    )


@dashboard_view
@require_POST
def tool_toggle(request, slug, pk):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_EDIT, org=server.organization)
    tool = parts.tool_toggle(tool=get_object_or_404(server.tools, pk=pk))
    state = "enabled" if tool.enabled else "disabled"
    _changed(request, server, f"Tool “{tool.name}” {state}.")
    return _back(server, PART_TYPES["tools"])


@dashboard_view
@require_POST
def part_move(request, slug, part, pk):
    """Swap a row with its neighbour; positions are renumbered so ties never stall a move."""
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_EDIT, org=server.organization)
    part_type = _part_type(part)
    direction = request.POST.get("direction")
    if not parts.part_move(server=server, related=part_type.related, pk=pk, direction=direction):
        raise Http404("No such item.")
    return _back(server, part_type)
