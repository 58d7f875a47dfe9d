from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.models import Membership, Organization
from activity import queries

from ..base import ScopedViewSet
from ..serializers import AnalyticsSerializer, OrganizationSerializer
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

    def get_queryset(self):
        return self.queryset.filter(memberships__user=self.request.user)

    def perform_update(self, serializer):
        role = serializer.instance.memberships.get(user=self.request.user).role
        if role not in (Membership.OWNER, Membership.ADMIN):
            raise exceptions.PermissionDenied(
                "Only owners and admins change organization settings."
            )
        serializer.save()

    @extend_schema(parameters=ANALYTICS_PARAMETERS, responses=AnalyticsSerializer)
    @action(detail=True, methods=["get"])
    def analytics(self, request, slug=None):
        """Calls over time, error rate, latency percentiles, top tools and clients."""
        filters, bucket = analytics_filters(request)
        return Response(queries.organization_analytics(self.get_object(), filters, bucket))
