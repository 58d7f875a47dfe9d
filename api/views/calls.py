from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, renderers
from rest_framework.request import Request

from activity.models import CallLog
from activity.queries import csv_lines

from ..base import ApiView, ScopedViewSet
from ..pagination import CallCursor
from ..scoping import scoped
from ..serializers import CallLogSerializer
from ..text import query_text
from .filters import CALL_PARAMETERS, call_filters


def filtered_calls(request: Request):
    queryset = scoped(CallLog.objects.all(), request.user)
    organization = query_text(request, "organization")
    if organization:
        queryset = queryset.filter(organization__slug=organization)
    return call_filters(request).apply(queryset)


class CallViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ScopedViewSet):
    """The call log of your organizations, newest first (arguments are redacted unless the
    server opted in)."""

    queryset = CallLog.objects.select_related("organization")
    serializer_class = CallLogSerializer
    pagination_class = CallCursor

    def get_queryset(self):
        if self.action == "list":
            return filtered_calls(self.request).select_related("organization")
        return super().get_queryset()

    @extend_schema(parameters=CALL_PARAMETERS)
    def list(self, request: Request, *args, **kwargs):
        return super().list(request, *args, **kwargs)


class CallCsvView(ApiView):
    """The filtered call log as CSV, streamed (every matching row, no pagination)."""

    renderer_classes = [renderers.JSONRenderer]

    def perform_content_negotiation(self, request: Request, force: bool = False):
        # Errors come back as JSON whatever the client asked for.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        parameters=CALL_PARAMETERS,
        responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV rows")},
    )
    def get(self, request: Request):
        calls = filtered_calls(request).order_by("-at", "-id")
        response = StreamingHttpResponse(csv_lines(calls), content_type="text/csv; charset=utf-8")
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response["Content-Disposition"] = f'attachment; filename="calls-{stamp}.csv"'
        return response
