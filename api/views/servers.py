from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from accounts import policy
from accounts.policy import Action
from activity import queries
from servers import publishing
from servers.definition import (
    DefinitionError,
    export_definition,
    import_definition,
    template_name_problems,
)
from servers.models import Server
from servers.slugs import SLUG_PATTERN

from ..base import CrudViewSet, OrganizationFilterMixin, ScopedViewSet
from ..definition_fields import ServerSerializer, field_errors
from ..scoping import member_organizations, server_of
from ..serializers import (
    AnalyticsSerializer,
    PublishSerializer,
    RollbackSerializer,
    VersionDetailSerializer,
    VersionSerializer,
)
from ..text import check_json, query_text
from .filters import ANALYTICS_PARAMETERS, analytics_filters

SERVER_SLUG = OpenApiParameter(
    "server_slug", str, OpenApiParameter.PATH, description="The server's slug."
)


class ServerViewSet(OrganizationFilterMixin, CrudViewSet):
    """Servers of your organizations, in the server-as-code format's field names."""

    queryset = Server.objects.select_related("organization").order_by("slug")
    serializer_class = ServerSerializer
    lookup_field = "slug"
    lookup_value_regex = SLUG_PATTERN
    policy_actions = {
        "create": Action.SERVER_CREATE,
        "update": Action.SERVER_SETTINGS,  # auth mode, status, origins, limits, slug
        "partial_update": Action.SERVER_SETTINGS,
        "destroy": Action.SERVER_DELETE,
        "import_": Action.SERVER_CREATE,  # replace=true: SERVER_SETTINGS too, see import_
        "rollback": Action.SERVER_PUBLISH,
    }

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get"])
    def export(self, request: Request, slug=None):
        """The server's whole definition (server-as-code), as `servers/definition.py` writes it."""
        return Response(export_definition(self.get_object()))

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        parameters=[
            OpenApiParameter("organization", str, description="Default: your personal one."),
            OpenApiParameter("replace", bool, description="Rewrite the server of that slug."),
        ],
        responses={200: ServerSerializer, 201: ServerSerializer},
    )
    @action(detail=False, methods=["post"], url_path="import")
    def import_(self, request: Request):
        """Create (or with replace=true rewrite) a server from a definition document."""
        organization = self._import_organization(request)
        self.policy_require_for(organization)
        check_json(request.data)
        replace = request.query_params.get("replace", "").lower() in {"1", "true", "yes"}
        if replace:
            policy.require(user=request.user, org=organization, action=Action.SERVER_SETTINGS)
        existed = Server.objects.filter(
            slug=str(request.data.get("slug", "")) if isinstance(request.data, dict) else "",
            organization=organization,
        ).exists()
        try:
            server = import_definition(
                request.data, organization, replace=replace, user=request.user
            )
        except DefinitionError as exc:
            raise serializers.ValidationError(field_errors(exc.errors, "")) from None
        code = status.HTTP_200_OK if existed and replace else status.HTTP_201_CREATED
        return Response(ServerSerializer(server, context=self.get_serializer_context()).data, code)

    def _import_organization(self, request: Request):
        slug = query_text(request, "organization")
        if not slug:
            return request.user.personal_organization()
        organization = member_organizations(request.user).filter(slug=slug).first()
        if organization is None:
            # The same answer as for an organization that does not exist.
            raise serializers.ValidationError(
                {"organization": [f"You have no organization slug={slug}."]}
            )
        return organization

    @extend_schema(parameters=ANALYTICS_PARAMETERS, responses=AnalyticsSerializer)
    @action(detail=True, methods=["get"])
    def analytics(self, request: Request, slug=None):
        """Calls over time, error rate, latency percentiles, top tools and clients."""
        filters, bucket = analytics_filters(request)
        return Response(queries.server_analytics(self.get_object(), filters, bucket))

    @extend_schema(request=RollbackSerializer, responses={201: VersionDetailSerializer})
    @action(detail=True, methods=["post"])
    def rollback(self, request: Request, slug=None):
        """Publish a new version with an old version's definition, and reset the draft to it."""
        server = self.get_object()
        body = RollbackSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            published = publishing.rollback(server, body.validated_data["version"], request.user)
        except publishing.PublishRefused as exc:
            raise PermissionDenied(str(exc)) from None
        except publishing.PublishError as exc:
            raise serializers.ValidationError({"version": [str(exc)]}) from None
        data = dict(VersionDetailSerializer(published).data)
        # A draft saved before templates were checked at save time is published, with a word.
        data["warnings"] = template_name_problems(published.definition)
        return Response(data, status=status.HTTP_201_CREATED)


@extend_schema(parameters=[SERVER_SLUG])
class VersionViewSet(
    mixins.ListModelMixin, mixins.CreateModelMixin, mixins.RetrieveModelMixin, ScopedViewSet
):
    """Published, immutable versions of a server. POST publishes the current draft."""

    serializer_class = VersionSerializer
    policy_actions = {"create": Action.SERVER_PUBLISH}
    lookup_field = "version"
    lookup_value_regex = r"[0-9]+\.[0-9]+\.[0-9]+"

    def get_queryset(self):
        from servers.models import ServerVersion

        if getattr(self, "swagger_fake_view", False):
            return ServerVersion.objects.none()
        server = server_of(self.request.user, self.kwargs["server_slug"])
        return server.versions.select_related("published_by").order_by("-published_at", "-id")

    def policy_organization(self):
        if getattr(self, "swagger_fake_view", False):
            return None
        return server_of(self.request.user, self.kwargs["server_slug"]).organization

    def get_object(self):
        return get_object_or_404(self.get_queryset(), version=self.kwargs["version"])

    def get_serializer_class(self):
        return VersionDetailSerializer if self.action == "retrieve" else VersionSerializer

    @extend_schema(request=PublishSerializer, responses={201: VersionDetailSerializer})
    def create(self, request: Request, *args, **kwargs):
        server = server_of(request.user, kwargs["server_slug"])
        body = PublishSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            published = publishing.publish(server, body.validated_data.get("version"), request.user)
        except publishing.PublishRefused as exc:
            raise PermissionDenied(str(exc)) from None
        except publishing.PublishError as exc:
            raise serializers.ValidationError({"version": [str(exc)]}) from None
        data = dict(VersionDetailSerializer(published).data)
        # A draft saved before templates were checked at save time is published, with a word.
        data["warnings"] = template_name_problems(published.definition)
        return Response(data, status=status.HTTP_201_CREATED)
