"""GET/PUT/PATCH/DELETE /api/organizations/<slug>/sso/: the organization's single sign-on
(admins and owners). The client secret is write-only: answers say whether one is set."""

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from accounts import policy
from accounts.models import Organization
from accounts.policy import Action
from api.base import ApiMixin

from . import config
from .flow import redirect_uri
from .models import SSO_ROLES


class ConnectionSerializer(serializers.Serializer):
    issuer = serializers.URLField(max_length=500)
    client_id = serializers.CharField(max_length=255)
    client_secret = serializers.CharField(
        write_only=True, required=False, allow_blank=True, help_text="Write-only; empty keeps it."
    )
    allowed_domains = serializers.ListField(child=serializers.CharField(max_length=253))
    default_role = serializers.ChoiceField(choices=SSO_ROLES, required=False)
    groups_claim = serializers.CharField(max_length=100, required=False)
    role_mapping = serializers.DictField(
        child=serializers.ChoiceField(choices=SSO_ROLES), required=False
    )
    required = serializers.BooleanField(
        required=False, help_text="Password sign-in refuses members (owners keep it)."
    )
    enabled = serializers.BooleanField(required=False)


class SsoAnswerSerializer(serializers.Serializer):
    """What GET, PUT and PATCH answer: `configured` false (and only the redirect URI) before
    anything is set."""

    configured = serializers.BooleanField()
    redirect_uri = serializers.CharField()
    issuer = serializers.URLField(required=False)
    client_id = serializers.CharField(required=False)
    client_secret_set = serializers.BooleanField(required=False)
    allowed_domains = serializers.ListField(child=serializers.CharField(), required=False)
    default_role = serializers.ChoiceField(choices=SSO_ROLES, required=False)
    groups_claim = serializers.CharField(required=False)
    role_mapping = serializers.DictField(
        child=serializers.ChoiceField(choices=SSO_ROLES), required=False
    )
    required = serializers.BooleanField(required=False)
    enabled = serializers.BooleanField(required=False)


class ConnectionView(ApiMixin, GenericAPIView):
    serializer_class = ConnectionSerializer
    policy_exempt = True  # checked below against the organization named in the URL

    def _organization(self) -> Organization:
        organization = Organization.objects.filter(slug=self.kwargs["slug"]).first()
        if organization is None:
            raise policy.NotFound()
        policy.require(user=self.request.user, org=organization, action=Action.SSO_MANAGE)
        return organization

    def _answer(self, connection, code=status.HTTP_200_OK) -> Response:
        described = config.describe(connection) if connection is not None else {}
        return Response(
            {"configured": connection is not None, **described, "redirect_uri": redirect_uri()},
            code,
        )

    def _save(self, request, *, partial: bool) -> Response:
        organization = self._organization()
        serializer = self.get_serializer(data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        existed = config.connection_of(organization) is not None
        try:
            connection = config.save(
                actor=request.user, organization=organization, values=serializer.validated_data
            )
        except ValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        return self._answer(connection, status.HTTP_200_OK if existed else status.HTTP_201_CREATED)

    @extend_schema(operation_id="organization_sso_retrieve", responses=SsoAnswerSerializer)
    def get(self, request, slug: str):
        # Unconfigured is an answer too: the redirect URI to register at the provider first.
        return self._answer(config.connection_of(self._organization()))

    @extend_schema(
        operation_id="organization_sso_update",
        responses={200: SsoAnswerSerializer, 201: SsoAnswerSerializer},
    )
    def put(self, request, slug: str):
        return self._save(request, partial=False)

    @extend_schema(
        operation_id="organization_sso_partial_update",
        responses={200: SsoAnswerSerializer, 201: SsoAnswerSerializer},
    )
    def patch(self, request, slug: str):
        return self._save(request, partial=True)

    @extend_schema(operation_id="organization_sso_destroy", responses={204: None})
    def delete(self, request, slug: str):
        # Idempotent: removing what is not there leaves it not there.
        config.delete(actor=request.user, organization=self._organization())
        return Response(status=status.HTTP_204_NO_CONTENT)
