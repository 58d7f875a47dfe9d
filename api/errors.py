"""Every API error has one shape: {"error": {"code", "message", "fields"}}.

That holds in failures too: Redis or Postgres down, hung or restarting gives a 503 with
Retry-After (never an HTML page), and any other unhandled error a JSON 500 (`server_error`,
Django's handler500, which also gives the dashboard a plain page: 503 during an outage).
"""

import logging
import sys

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.template import loader
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from accounts.billing import OrganizationLimitReached
from servers.outages import RETRY_AFTER_SECONDS, outage_message, outage_of

log = logging.getLogger(__name__)


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


def _unavailable(service: str) -> dict:
    return error_body("unavailable", outage_message(service))


def exception_handler(exc, context):
    service = outage_of(exc)
    if service is not None:
        log.warning("API request failed: %s unavailable: %r", service, exc)
        return Response(
            _unavailable(service), status=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)}
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        # accounts.policy says which role the action takes; keep that message.
        exc = exceptions.PermissionDenied(str(exc) or None)
    elif isinstance(exc, OrganizationLimitReached):  # a personal organization made again
        exc = exceptions.ValidationError({"organization": exc.messages})
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


def server_error(request, *args, **kwargs):
    """handler500: called by Django inside the `except` of the failed request, so the
    exception is at hand to tell an outage (503, retry) from a bug (500)."""
    service = outage_of(sys.exc_info()[1]) if sys.exc_info()[1] is not None else None
    status = 503 if service else 500
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if service else {}
    if request.path.startswith("/api/"):
        body = _unavailable(service) if service else error_body("error", "Internal server error.")
        return JsonResponse(body, status=status, headers=headers)
    # No context processors: during an outage they would reach for the session and the user.
    page = loader.get_template("503.html" if service else "500.html").render({})
    return HttpResponse(page, status=status, headers=headers)
