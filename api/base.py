"""What every management API view shares: authentication, scoping, errors, schema, pagination.

Set per view so the API behaves the same whatever the project-wide REST_FRAMEWORK settings are.
"""

from rest_framework import authentication, parsers, permissions, viewsets
from rest_framework.views import APIView

from .authentication import PersonalTokenAuthentication
from .errors import exception_handler
from .pagination import Pages
from .schema import ApiSchema
from .scoping import scoped


class ApiMixin:
    authentication_classes = [PersonalTokenAuthentication, authentication.SessionAuthentication]
    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [parsers.JSONParser]
    pagination_class = Pages
    schema = ApiSchema()

    def get_exception_handler(self):
        return exception_handler


class ApiView(ApiMixin, APIView):
    pass


class ScopedViewSet(ApiMixin, viewsets.GenericViewSet):
    """Its queryset holds only objects of the user's organizations."""

    organization_path = "organization"

    def get_queryset(self):
        return scoped(super().get_queryset(), self.request.user, self.organization_path)
