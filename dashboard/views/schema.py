"""The server-side half of the JSON Schema editor: the page posts the text as you type."""

import json

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_POST

from mcp_protocol.schemas import schema_problems as tenant_schema_problems

from .base import dashboard_view

MAX_BYTES = 256 * 1024


def schema_problems(text: str, *, must_be_object: bool = True) -> list[dict]:
    if len(text.encode()) > MAX_BYTES:
        return [{"path": "", "message": "The schema is larger than 256 KiB."}]
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        return [{"path": "", "message": f"{exc.msg} (line {exc.lineno}, column {exc.colno})"}]
    except RecursionError:
        return [{"path": "", "message": "The schema is nested too deeply."}]
    if not isinstance(schema, dict):
        return [{"path": "", "message": "A schema must be a JSON object."}]
    problems = tenant_schema_problems(schema)
    if problems:
        return [{"path": where.lstrip("."), "message": message} for where, message in problems]
    if must_be_object and schema.get("type") != "object":
        return [{"path": "type", "message": 'An input schema\'s type must be "object".'}]
    return []


@dashboard_view
@require_POST
def schema_check(request: HttpRequest):
    text = request.body.decode("utf-8", errors="replace")
    must_be_object = request.GET.get("object", "1") != "0"
    problems = schema_problems(text, must_be_object=must_be_object)
    return JsonResponse({"valid": not problems, "errors": problems})
