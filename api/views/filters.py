"""Query parameters of the call log, shared by the list, the CSV export and analytics."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request

from activity.queries import BUCKETS, CallFilters, FilterError

from ..text import query_text


def _param(name, description, type_=str, enum=None):
    return OpenApiParameter(name, type_, OpenApiParameter.QUERY, description=description, enum=enum)


CALL_PARAMETERS = [
    _param("organization", "Organization slug."),
    _param("server", "Server slug."),
    _param("tool", "Tool name."),
    _param(
        "outcome", "ok, tool_error or error (empty: any).", enum=["", "ok", "tool_error", "error"]
    ),
    _param("surface", "mcp, rest or webtools (empty: any).", enum=["", "mcp", "rest", "webtools"]),
    _param("client", "Client name (clientInfo.name)."),
    _param("key", "API key id.", OpenApiTypes.INT),
    _param("from", "From this ISO 8601 date or datetime (inclusive)."),
    _param("to", "Up to this ISO 8601 datetime (exclusive), or through this date."),
]
ANALYTICS_PARAMETERS = [
    *(p for p in CALL_PARAMETERS if p.name not in {"organization", "server"}),
    _param("bucket", "Width of the calls-over-time buckets (empty: hour).", enum=["", *BUCKETS]),
]


def call_filters(request: Request) -> CallFilters:
    for name in ("organization", "server", "tool", "client", "from", "to", "key", "bucket"):
        query_text(request, name)
    try:
        return CallFilters.from_params(request.query_params)
    except FilterError as exc:
        raise serializers.ValidationError({exc.field: [exc.message]}) from None


def analytics_filters(request: Request) -> tuple[CallFilters, str]:
    bucket = request.query_params.get("bucket") or "hour"
    if bucket not in BUCKETS:
        raise serializers.ValidationError({"bucket": [f"must be one of {', '.join(BUCKETS)}"]})
    filters = call_filters(request)
    # The path already names the server or organization.
    return CallFilters(**{**filters.__dict__, "server": None}), bucket
