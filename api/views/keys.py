from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.models import ApiKey
from accounts.policy import Action

from ..base import CrudViewSet, OrganizationFilterMixin, ScopedViewSet
from ..models import PersonalAccessToken
from ..serializers import ApiKeySerializer, NewApiKeySerializer, NewTokenSerializer, TokenSerializer


class KeyViewSet(OrganizationFilterMixin, CrudViewSet):
    """MCP API keys of your organizations. The raw key is in the create response only;
    DELETE revokes the key (it stays listed, so call logs keep naming it)."""

    queryset = (
        ApiKey.objects.select_related("organization")
        .prefetch_related("servers")
        .order_by("-created_at", "-id")
    )
    serializer_class = ApiKeySerializer
    policy_actions = {
        "create": Action.KEY_CREATE,
        "update": Action.KEY_MANAGE,
        "partial_update": Action.KEY_MANAGE,
        "destroy": Action.KEY_MANAGE,
    }

    @extend_schema(request=ApiKeySerializer, responses={201: NewApiKeySerializer})
    def create(self, request: Request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        self.perform_create(serializer)
        key = serializer.instance
        return Response(NewApiKeySerializer(key, context=self.get_serializer_context()).data, 201)

    def perform_destroy(self, key) -> None:
        key.revoke()


class TokenViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    ScopedViewSet,
):
    """Your personal access tokens for this API. The raw token is in the create response only;
    DELETE revokes it at once."""

    queryset = PersonalAccessToken.objects.order_by("-created_at", "-id")
    serializer_class = TokenSerializer
    policy_exempt = True  # the user's own tokens; no organization involved

    def get_queryset(self):
        return self.queryset.filter(user=self.request.user)

    @extend_schema(request=TokenSerializer, responses={201: NewTokenSerializer})
    def create(self, request: Request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token = serializer.save()
        return Response(NewTokenSerializer(token).data, status=status.HTTP_201_CREATED)

    def perform_destroy(self, token) -> None:
        token.revoke()
