"""Errors as JSON under /api/ (and /mcp/, where Django never runs but a stray request might
land), with bounded tracebacks in the log.

DRF answers its own exceptions as JSON (api.errors); this middleware covers the rest: an
exception no view handled, and the HTML error pages Django itself produces (a DisallowedHost
400, a 404 from the URL resolver, a 500). No traceback ever goes into a response.
"""

import logging
import traceback

from django.http import JsonResponse
from django.utils.decorators import sync_and_async_middleware

log = logging.getLogger("getmcp.errors")

JSON_PREFIXES = ("/api/", "/mcp/", "/webtools/", "/scim/")
MAX_TRACEBACK_FRAMES = 30
MAX_TRACEBACK_CHARS = 16_000

_CODES = {
    400: "bad_request",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    500: "internal_error",
}


def _json_error(status: int, message: str) -> JsonResponse:
    code = _CODES.get(status, "error")
    return JsonResponse({"error": {"code": code, "message": message, "fields": {}}}, status=status)


def _rewrite(request, response):
    if not request.path.startswith(JSON_PREFIXES) or response.status_code < 400:
        return response
    content_type = response.get("Content-Type", "").split(";")[0].strip()
    if content_type == "application/json" or content_type.endswith("+json"):
        return response  # JSON already (SCIM answers application/scim+json)
    if getattr(response, "streaming", False):
        return response
    reason = response.reason_phrase or "Error"
    return _json_error(response.status_code, f"{reason}.")


def _exception(request, exception):
    if not request.path.startswith(JSON_PREFIXES):
        return None
    log.error(
        "Unhandled %s on %s %s:\n%s",
        type(exception).__name__,
        request.method,
        request.path[:200],
        bounded_traceback(exception),
    )
    return _json_error(500, "Internal error.")


@sync_and_async_middleware
def json_errors(get_response):
    import asyncio

    if asyncio.iscoroutinefunction(get_response):

        async def middleware(request):
            return _rewrite(request, await get_response(request))

    else:

        def middleware(request):
            return _rewrite(request, get_response(request))

    middleware.process_exception = _exception
    return middleware


def bounded_traceback(exception: BaseException) -> str:
    """The last MAX_TRACEBACK_FRAMES frames, at most MAX_TRACEBACK_CHARS characters: a
    recursion 1,000 frames deep logs the frames that matter, not 132 KB."""
    text = "".join(traceback.format_exception(exception, limit=-MAX_TRACEBACK_FRAMES, chain=False))
    if len(text) > MAX_TRACEBACK_CHARS:
        text = "[...]\n" + text[-MAX_TRACEBACK_CHARS:]
    return text


class BoundedTracebackFormatter(logging.Formatter):
    """Every logged traceback, from any logger, bounded the same way."""

    def formatException(self, ei):  # noqa: N802 - logging's name
        _type, value, _tb = ei
        if value is None:
            return super().formatException(ei)
        return bounded_traceback(value).rstrip("\n")
