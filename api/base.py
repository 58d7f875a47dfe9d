"""What every management API view shares: authentication, scoping, the role check, errors,
schema, pagination.

Set per view so the API behaves the same whatever the project-wide REST_FRAMEWORK settings are.
Role checks go through accounts.policy: each viewset maps its DRF actions to policy actions in
`policy_actions`; a write action missing from that map is refused (fail closed).
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import authentication, mixins, parsers, permissions, viewsets
from rest_framework.request import Request
from rest_framework.views import APIView

from accounts import policy
from accounts.policy import Action

from .authentication import PersonalTokenAuthentication
from .errors import exception_handler
from .pagination import Pages
from .schema import ApiSchema
from .scoping import scoped
from .text import query_text


class PolicyPermission(permissions.BasePermission):
    """Asks accounts.policy: before the view runs when the organization is known from the URL
    (a server's parts and versions), and again on the object (get_object) for detail routes.
    Outsiders get 404 (policy.NotFound), members whose role is too low 403."""

    def has_permission(self, request: Request, view) -> bool:
        action = view.policy_action()
        org = view.policy_organization()
        if action is not None and org is not None:
            policy.require(user=request.user, org=org, action=action)
        return True

    def has_object_permission(self, request: Request, view, obj) -> bool:
        action = view.policy_action()
        if action is not None:
            org = view.policy_object_organization(obj)
            policy.require(user=request.user, org=org, action=action, obj=obj)
        return True


class ApiMixin:
    authentication_classes = [PersonalTokenAuthentication, authentication.SessionAuthentication]
    permission_classes = [permissions.IsAuthenticated, PolicyPermission]
    parser_classes = [parsers.JSONParser]
    pagination_class = Pages
    schema = ApiSchema()
    # DRF action (or HTTP method for plain views) -> accounts.policy.Action. Safe methods
    # default to Action.VIEW; an unlisted write is refused.
    policy_actions: dict[str, Action] = {}
    # Views about the user alone (their tokens), not an organization.
    policy_exempt = False

    def policy_action(self) -> Action | None:
        if self.policy_exempt:
            return None
        method = self.request.method.lower()
        if isinstance(self, viewsets.ViewSetMixin):
            name = self.action
        else:
            name = method if hasattr(self, method) else None
        if name is None:
            return None  # no handler: DRF answers 405
        if name in self.policy_actions:
            return self.policy_actions[name]
        if self.request.method in permissions.SAFE_METHODS:
            return Action.VIEW
        raise policy.PermissionDenied(f"No role may {self.request.method} here.")

    def policy_organization(self):
        """The organization the URL names, when it names one before any object is looked up."""
        return None

    def policy_object_organization(self, obj):
        return obj.organization

    def policy_require_for(self, organization, obj=None) -> None:
        """For creates, whose organization comes from the body: call once it is validated."""
        action = self.policy_action()
        if action is not None:
            policy.require(user=self.request.user, org=organization, action=action, obj=obj)

    def get_exception_handler(self):
        return exception_handler


class OrganizationCreateMixin:
    """First in a viewset's bases (DRF's CreateModelMixin would otherwise win the MRO): the
    organization a create names in its body is checked once the body is validated."""

    def perform_create(self, serializer) -> None:
        self.policy_require_for(serializer.validated_data["organization"])
        serializer.save()


class ApiView(ApiMixin, APIView):
    pass


class ScopedViewSet(ApiMixin, viewsets.GenericViewSet):
    """Its queryset holds only objects of the user's organizations."""

    organization_path = "organization"

    def get_queryset(self):
        return scoped(super().get_queryset(), self.request.user, self.organization_path)


class CrudViewSet(
    OrganizationCreateMixin,
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    ScopedViewSet,
):
    """Objects of the user's organizations, listed, read, created (in an organization the body
    names, checked once it is valid), changed and deleted."""


class OrganizationFilterMixin:
    """`?organization=<slug>` narrows a list to one of the user's organizations. First in a
    viewset's bases, so that it narrows what ScopedViewSet has already scoped."""

    def get_queryset(self):
        queryset = super().get_queryset()
        organization = query_text(self.request, "organization")
        return queryset.filter(organization__slug=organization) if organization else queryset

    @extend_schema(
        parameters=[OpenApiParameter("organization", str, description="Organization slug.")]
    )
    def list(self, request: Request, *args, **kwargs):
        return super().list(request, *args, **kwargs)


# The DRF actions that change an object of a ManagedViewSet.
_WRITES = ("create", "update", "partial_update", "destroy")


class ManagedViewSet(CrudViewSet):
    """Objects any member may read and only one role may change (OAuth providers, trusted
    issuers, service accounts): every write is `manage_action`; a subclass's own
    `policy_actions` add its extra routes."""

    manage_action: Action

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        manage = cls.__dict__.get("manage_action")
        if manage is not None:
            own = cls.__dict__.get("policy_actions", {})
            cls.policy_actions = {**dict.fromkeys(_WRITES, manage), **own}
