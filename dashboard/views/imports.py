"""Import tools from an OpenAPI, Swagger or Postman document: upload, paste or URL; preview the
operations; create the ones picked, as disabled `http` tools to review before switching on.

The preview step hands the document back to the page as JSON in a hidden field, so the second
step creates exactly what was previewed, without a second fetch or any server-side state."""

import orjson
from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from accounts.policy import Action
from servers.importers import ImportFailed, commit_import, parse_openapi, parse_postman
from servers.importers.sources import MAX_DOCUMENT_BYTES, load

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
                tools = commit_import(server, preview, selected)
                messages.success(
                    request,
                    f"Imported {len(tools)} tool{'s' if len(tools) != 1 else ''} as disabled "
                    "drafts: review each one, add the secrets it needs, then switch it on.",
                )
                return redirect(f"/servers/{server.slug}/#tools")
            document, _ = load(_source(request), server.organization_id)
            context["preview"] = _parse(document, server.organization_id)
            context["document"] = orjson.dumps(document).decode()
        except (ImportFailed, orjson.JSONDecodeError) as exc:
            context["error"] = str(exc)
            return page(request, "dashboard/servers/import.html", context, status=400)
    return page(request, "dashboard/servers/import.html", context)
