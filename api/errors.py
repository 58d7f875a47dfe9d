"""Every API error has one shape: {"error": {"code", "message", "fields"}}."""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, serializers
from rest_framework.views import exception_handler as drf_exception_handler


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Messages per offending field (dotted paths for nested ones).",
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


def error_body(code: str, message: str, fields: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def exception_handler(exc, context):
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        # accounts.policy says which role the action takes; keep that message.
        exc = exceptions.PermissionDenied(str(exc) or None)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields = _flatten(exc.detail)
        general = fields.pop("non_field_errors", None) or fields.pop("", None)
        message = general[0] if general else "Invalid input."
        if general and len(general) > 1:
            fields["non_field_errors"] = general
        response.data = error_body("invalid", message, fields)
    else:
        response.data = error_body(exc.default_code, str(exc.detail))
    return response


def _flatten(detail, prefix: str = "") -> dict[str, list[str]]:
    if isinstance(detail, dict):
        out = {}
        for key, value in detail.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            out.update(_flatten(value, path))
        return out
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return {prefix: [str(item) for item in detail]}
        out = {}
        for i, item in enumerate(detail):
            if item:
                out.update(_flatten(item, f"{prefix}[{i}]" if prefix else str(i)))
        return out
    return {prefix: [str(detail)]}


@csrf_exempt
def not_found(request, *args, **kwargs):
    """Unknown paths under /api/ answer in the API's shape, not Django's HTML page."""
    return JsonResponse(error_body("not_found", "Not found."), status=404)
