from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins

from accounts.policy import Action
from servers import definition as d

from ..base import ScopedViewSet
from ..definition_fields import (
    PromptSerializer,
    ResourceSerializer,
    ResourceTemplateSerializer,
    ToolSerializer,
)
from ..scoping import server_of
from .bulk import TOOL_FILTERS, ToolBulkActions
from .servers import SERVER_SLUG
from .tooling import ToolActions
from .upstream import UpstreamActions


class PartViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    ScopedViewSet,
):
    """The draft rows of one server; writes are checked by the definition format's rules."""

    lookup_value_regex = r"[0-9]+"
    policy_actions = {
        "create": Action.SERVER_EDIT,
        "update": Action.SERVER_EDIT,
        "partial_update": Action.SERVER_EDIT,
        "destroy": Action.SERVER_EDIT,
        "import_api_preview": Action.SERVER_EDIT,
        "import_api_commit": Action.SERVER_EDIT,
        "test": Action.SERVER_EDIT,  # runs with the server's test secrets
        "approve_secrets": Action.SECRET_REACH,  # servers/secret_reach.py
        "from_upstream_preview": Action.SERVER_EDIT,  # reaches out with the server's secrets
        "from_upstream": Action.SERVER_EDIT,
        "bulk": Action.SERVER_EDIT,  # enable, disable or delete many tools
    }

    @property
    def part(self):
        return d.PARTS[self.serializer_class.list_key]

    def server(self):
        if not hasattr(self, "_server"):
            self._server = server_of(self.request.user, self.kwargs["server_slug"])
        return self._server

    def policy_organization(self):
        if getattr(self, "swagger_fake_view", False):
            return None
        return self.server().organization

    def policy_object_organization(self, obj):
        return self.server().organization

    def get_queryset(self):
        model, _, _, related = self.part
        if getattr(self, "swagger_fake_view", False):
            return model.objects.none()
        return getattr(self.server(), related).order_by("position", "id")

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False) and "server_slug" in self.kwargs:
            context["server"] = self.server()
        return context


@extend_schema(parameters=[SERVER_SLUG])
@extend_schema_view(list=extend_schema(parameters=TOOL_FILTERS))
class ToolViewSet(ToolBulkActions, ToolActions, UpstreamActions, PartViewSet):
    serializer_class = ToolSerializer


@extend_schema(parameters=[SERVER_SLUG])
class ResourceViewSet(UpstreamActions, PartViewSet):
    serializer_class = ResourceSerializer


@extend_schema(parameters=[SERVER_SLUG])
class ResourceTemplateViewSet(PartViewSet):
    serializer_class = ResourceTemplateSerializer


@extend_schema(parameters=[SERVER_SLUG])
class PromptViewSet(UpstreamActions, PartViewSet):
    serializer_class = PromptSerializer
