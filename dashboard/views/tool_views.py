"""The tool editor's view generator: the page posts the chosen template, the output schema and
a sample result as typed; the answer is the view's settings, for the person to adjust."""

import json

from django.http import JsonResponse
from django.views.decorators.http import require_POST

from accounts.policy import Action
from servers.views import generate_view

from ..forms.tool_views import TEMPLATE_CHOICES
from ..scoping import server_or_404
from .base import authorize, dashboard_view

MAX_BYTES = 512 * 1024


def _json_or_none(text, what: str):
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"The {what} is not valid JSON: {exc}.") from None


@dashboard_view
@require_POST
def view_generate(request, slug):
    server = server_or_404(request, slug)
    authorize(request, Action.SERVER_EDIT, org=server.organization)
    if len(request.body) > MAX_BYTES:
        return JsonResponse({"error": "The request is larger than 512 KiB."}, status=400)
    try:
        posted = json.loads(request.body or b"{}")
        choice = posted.get("template") or "table"
        if choice not in dict(TEMPLATE_CHOICES):
            raise ValueError(f"Unknown template {choice!r}.")
        output_schema = _json_or_none(posted.get("outputSchema"), "output schema")
        sample = _json_or_none(posted.get("sample"), "sample result")
    except (ValueError, AttributeError) as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    template, _, chart_type = choice.partition("-")
    view = generate_view(
        template,
        output_schema=output_schema if isinstance(output_schema, dict) else None,
        sample=sample,
        form_tool=str(posted.get("formTool") or ""),
        chart_type=chart_type or "line",
    )
    return JsonResponse({"view": view})
