from drf_spectacular.utils import extend_schema
from rest_framework import mixins
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.models import Organization
from accounts.policy import Action
from activity import queries

from ..base import ScopedViewSet
from ..serializers import AnalyticsSerializer, OrganizationSerializer, UsageSerializer
from .filters import ANALYTICS_PARAMETERS, analytics_filters


class OrganizationViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.UpdateModelMixin, ScopedViewSet
):
    """The organizations you are a member of."""

    queryset = Organization.objects.order_by("created_at", "id")
    serializer_class = OrganizationSerializer
    lookup_field = "slug"
    organization_path = ""
    http_method_names = ["get", "patch", "head", "options"]
    # Retention and quotas are the writable fields: billing-like, owners only.
    policy_actions = {"partial_update": Action.ORG_QUOTAS}

    def get_queryset(self):
        return self.queryset.filter(memberships__user=self.request.user)

    def policy_object_organization(self, obj):
        return obj

    @extend_schema(parameters=ANALYTICS_PARAMETERS, responses=AnalyticsSerializer)
    @action(detail=True, methods=["get"])
    def analytics(self, request: Request, slug=None):
        """Calls over time, error rate, latency percentiles, top tools and clients."""
        filters, bucket = analytics_filters(request)
        return Response(queries.organization_analytics(self.get_object(), filters, bucket))

    @extend_schema(responses=UsageSerializer)
    @action(detail=True, methods=["get"])
    def usage(self, request: Request, slug=None):
        """This month's tool calls against the monthly quota, and the task cap."""
        from servers.quotas import usage

        return Response(usage(self.get_object()))
