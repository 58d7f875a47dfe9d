"""Service accounts over the API (accounts/service_accounts.py holds every rule): list, create,
rename or change role, disable, delete (its keys are revoked), and issue keys that act as one.
A key moves to a service account through the key's own `serviceAccount` field."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from accounts import service_accounts as service
from accounts.models import ServiceAccount
from accounts.policy import Action

from .base import ManagedViewSet
from .machine_access import ServiceClientActions
from .scoping import DefaultOrganization, MemberOrganizationField
from .serializers import ApiKeySerializer, NewApiKeySerializer
from .serializers import _django_checked as _checked


class ServiceAccountSerializer(serializers.ModelSerializer):
    organization = MemberOrganizationField(default=DefaultOrganization())
    role = serializers.ChoiceField(choices=ServiceAccount.ROLES, default="member")
    disabled = serializers.BooleanField(required=False)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    activeKeys = serializers.SerializerMethodField()

    class Meta:
        model = ServiceAccount
        fields = ["id", "organization", "name", "role", "disabled", "createdAt", "activeKeys"]

    def to_representation(self, account):
        data = super().to_representation(account)
        data["disabled"] = account.disabled_at is not None
        return data

    def get_activeKeys(self, account) -> int:
        return account.api_keys.filter(revoked_at=None).count()

    def validate(self, attrs):
        moved = "organization" in attrs and attrs["organization"] != getattr(
            self.instance, "organization", attrs["organization"]
        )
        if self.instance is not None and moved:
            raise serializers.ValidationError({"organization": ["cannot be changed"]})
        return attrs

    def create(self, validated_data):
        request = self.context["request"]
        return _checked(
            service.service_account_create,
            actor=request.user,
            organization=validated_data["organization"],
            name=validated_data["name"],
            role=validated_data.get("role", "member"),
        )

    def update(self, account, validated_data):
        actor = self.context["request"].user
        _checked(
            service.service_account_update,
            actor=actor,
            account=account,
            name=validated_data.get("name"),
            role=validated_data.get("role"),
        )
        if "disabled" in validated_data:
            service.service_account_set_disabled(
                actor=actor, account=account, disabled=validated_data["disabled"]
            )
        return account


class ServiceAccountViewSet(ManagedViewSet, ServiceClientActions):
    """Service accounts: machine identities whose keys act as them, with their role."""

    queryset = ServiceAccount.objects.select_related("organization").order_by("name", "id")
    serializer_class = ServiceAccountSerializer
    manage_action = Action.SERVICE_ACCOUNTS
    policy_actions = {
        "keys": Action.SERVICE_ACCOUNTS,
        # Client credentials (api/machine_access.py): listing them is an admin's too.
        "clients": Action.SERVICE_ACCOUNTS,
        "client": Action.SERVICE_ACCOUNTS,
    }

    def perform_destroy(self, account) -> None:
        service.service_account_delete(actor=self.request.user, account=account)

    @extend_schema(request=ApiKeySerializer, responses={201: NewApiKeySerializer})
    @action(detail=True, methods=["post"])
    def keys(self, request: Request, pk=None):
        """A new key acting as this service account; the raw key is in this response only."""
        account = self.get_object()
        body = ApiKeySerializer(
            data={**request.data, "organization": account.organization.slug},
            context=self.get_serializer_context(),
        )
        body.is_valid(raise_exception=True)
        data = body.validated_data
        key, raw = _checked(
            service.service_account_key_issue,
            actor=request.user,
            account=account,
            name=data["name"],
            servers=data.get("servers", ()),
            expires_at=data.get("expires_at"),
        )
        if data.get("access") or data.get("limits"):
            key.access = data.get("access") or {}
            key.limits = data.get("limits") or {}
            key.save(update_fields=["access", "limits"])
        key.raw = raw
        return Response(NewApiKeySerializer(key, context=self.get_serializer_context()).data, 201)
