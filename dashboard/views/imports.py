"""Import tools from an OpenAPI, Swagger or Postman document: upload, paste or URL; preview the
operations; create the ones picked, as disabled `http` tools to review before switching on.

The preview step hands the document back to the page as JSON in a hidden field, so the second
step creates exactly what was previewed, without a second fetch or any server-side state."""

import orjson
from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from accounts.policy import Action
from connections.imported import create_proposed, describe_proposals
from integrations.importers import (
    ImportFailed,
    ImportPlan,
    apply_import,
    parse_openapi,
    parse_postman,
    plan_import,
)
from integrations.importers.sources import MAX_DOCUMENT_BYTES, load

from ..scoping import server_or_404
from .base import authorize, dashboard_view, page


def _parse(document: dict, organization_id: int):
    if not isinstance(document, dict):
        # Only a hand-edited preview form gets here: the preview step always sends a mapping.
        raise ImportFailed("document: must be a JSON or YAML mapping at the top level")
    if "openapi" in document or "swagger" in document:
        return parse_openapi(document, organization_id=organization_id)
    schema = str((document.get("info") or {}).get("schema", ""))
    if "postman" in schema or "item" in document:
        return parse_postman(document, organization_id=organization_id)
    raise ImportFailed(
        "document: not an OpenAPI 3, Swagger 2 or Postman 2.1 document (no openapi, swagger "
        "or Postman info.schema field)"
    )


def _source(request):
    upload = request.FILES.get("file")
    if upload:
        if upload.size > MAX_DOCUMENT_BYTES:
            raise ImportFailed(f"file: larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
        return upload.read()
    url = (request.POST.get("url") or "").strip()
    if url:
        if not url.lower().startswith(("http://", "https://")):
            raise ImportFailed("url: must start with http:// or https://")
        return url
    text = request.POST.get("text") or ""
    if text.strip():
        return text
    raise ImportFailed("Upload a file, paste a document or give its URL.")


def _plan_rows(preview, plan: ImportPlan) -> dict:
    """The preview's plan for the template: each operation with what it does to the server,
    and the tools the document no longer has."""
    by_source = {c.source: c for c in plan.changes if c.operation is not None}
    return {
        "rows": [(op, by_source.get(op.source)) for op in preview.operations],
        "removed": plan.of("removed"),
        "counts": {a: len(plan.of(a)) for a in ("added", "changed", "unchanged", "removed")},
    }


def _outcome(plan: ImportPlan, *, removed: bool) -> str:
    added, changed = len(plan.of("added")), len(plan.of("changed"))
    unchanged, gone = len(plan.of("unchanged")), len(plan.of("removed")) if removed else 0
    words = [f"{added} added as disabled drafts", f"{changed} updated", f"{unchanged} unchanged"]
    if gone:
        words.append(f"{gone} removed")
    text = "Imported: " + ", ".join(words) + "."
    if added:
        text += " Review each new tool, add the secrets it needs, then switch it on."
    return text


@dashboard_view
@require_http_methods(["GET", "POST"])
def import_tools(request, slug):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_EDIT, org=server.organization)
    context = {"server": server, "values": request.POST}
    if request.method == "POST":
        try:
            if request.POST.get("step") == "create":
                document = orjson.loads(request.POST.get("document") or "{}")
                preview = _parse(document, server.organization_id)
                selected = request.POST.getlist("operation")
                if not selected:
                    raise ImportFailed("Pick at least one operation.")
                remove = request.POST.get("remove_missing") == "on"
                # Every operation picked: a whole-document import, whose removals may apply.
                whole = len(set(selected)) >= len(preview.operations)
                plan, _tools = apply_import(
                    server, preview, None if whole else selected, remove_missing=remove
                )
                messages.success(request, _outcome(plan, removed=remove and whole))
                _made, notes = create_proposed(
                    actor=request.user,
                    organization=server.organization,
                    proposals=preview.providers,
                    credentials={
                        p["key"]: {
                            "clientId": request.POST.get(f"provider_{p['key']}_client_id", ""),
                            "clientSecret": request.POST.get(
                                f"provider_{p['key']}_client_secret", ""
                            ),
                        }
                        for p in preview.providers
                    },
                )
                for note in notes:
                    messages.warning(request, note)
                return redirect(f"/servers/{server.slug}/#tools")
            document, _ = load(_source(request), server.organization_id)
            preview = _parse(document, server.organization_id)
            context["preview"] = preview
            context["providers"] = describe_proposals(
                actor=request.user, organization=server.organization, proposals=preview.providers
            )
            context["plan"] = _plan_rows(preview, plan_import(server, preview))
            context["document"] = orjson.dumps(document).decode()
        except (ImportFailed, orjson.JSONDecodeError) as exc:
            context["error"] = str(exc)
            return page(request, "dashboard/servers/import.html", context, status=400)
    return page(request, "dashboard/servers/import.html", context)
