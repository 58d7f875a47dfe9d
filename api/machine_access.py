"""Machine access over the API (docs/oauth.md): the enterprise identity providers an
organization trusts for ID-JAG (oauth/trust.py holds every rule), and a service account's client
credentials (oauth/service_clients.py). Reads of providers are any member's; every write, and
anything about client credentials, is an admin's (accounts/policy.py)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.policy import Action
from oauth import metadata, service_clients, trust
from oauth.models import Client, TrustedIssuer

from .base import ManagedViewSet, ScopedViewSet
from .scoping import DefaultOrganization, MemberOrganizationField
from .serializers import _django_checked as _checked


class TrustedIssuerSerializer(serializers.ModelSerializer):
    organization = MemberOrganizationField(default=DefaultOrganization())
    jwksUrl = serializers.CharField(source="jwks_url", max_length=2000)
    audience = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    allowedClientIds = serializers.ListField(
        source="allowed_client_ids", child=serializers.CharField(max_length=2000), required=False
    )
    subjectMapping = serializers.ChoiceField(
        source="subject_mapping", choices=TrustedIssuer.SUBJECT_MAPPINGS, required=False
    )
    enabled = serializers.BooleanField(required=False)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = TrustedIssuer
        fields = [
            "id",
            "organization",
            "name",
            "issuer",
            "jwksUrl",
            "audience",
            "allowedClientIds",
            "subjectMapping",
            "enabled",
            "createdAt",
        ]

    def validate(self, attrs):
        moved = "organization" in attrs and attrs["organization"] != getattr(
            self.instance, "organization", attrs["organization"]
        )
        if self.instance is not None and moved:
            raise serializers.ValidationError({"organization": ["cannot be changed"]})
        return attrs

    def create(self, validated_data):
        organization = validated_data.pop("organization")
        return _checked(
            trust.trusted_issuer_create,
            actor=self.context["request"].user,
            organization=organization,
            values=validated_data,
        )

    def update(self, instance, validated_data):
        validated_data.pop("organization", None)
        return _checked(
            trust.trusted_issuer_update,
            actor=self.context["request"].user,
            trust=instance,
            values=validated_data,
        )


class TrustedIssuerViewSet(ManagedViewSet):
    """Enterprise identity providers trusted for enterprise-managed authorization (ID-JAG)."""

    queryset = TrustedIssuer.objects.select_related("organization").order_by("name", "id")
    serializer_class = TrustedIssuerSerializer
    manage_action = Action.TRUSTED_ISSUERS

    def perform_destroy(self, instance) -> None:
        trust.trusted_issuer_delete(actor=self.request.user, trust=instance)


class ServiceClientSerializer(serializers.ModelSerializer):
    """A service account's client credentials; `clientSecret` appears in the create answer
    only (a digest is kept)."""

    clientId = serializers.CharField(source="client_id", read_only=True)
    name = serializers.CharField(source="client_name", max_length=200)
    jwks = serializers.JSONField(required=False, help_text="Public keys for private_key_jwt")
    tokenEndpointAuthMethod = serializers.CharField(
        source="token_endpoint_auth_method", read_only=True
    )
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = Client
        fields = ["id", "clientId", "name", "jwks", "tokenEndpointAuthMethod", "createdAt"]


class NewServiceClientSerializer(ServiceClientSerializer):
    clientSecret = serializers.CharField(read_only=True, allow_null=True)
    tokenEndpoint = serializers.CharField(read_only=True)
    issuer = serializers.CharField(read_only=True)

    class Meta(ServiceClientSerializer.Meta):
        fields = [*ServiceClientSerializer.Meta.fields, "clientSecret", "tokenEndpoint", "issuer"]


class ServiceClientActions(ScopedViewSet):
    """The service accounts' viewset's /api/service-accounts/<id>/clients/ routes."""

    @extend_schema(
        request=ServiceClientSerializer,
        responses={200: ServiceClientSerializer(many=True), 201: NewServiceClientSerializer},
    )
    @action(detail=True, methods=["get", "post"])
    def clients(self, request: Request, pk=None):
        """List its client credentials, or create new ones (the secret is in this answer only)."""
        account = self.get_object()
        if request.method == "GET":
            found = service_clients.service_clients_of(account)
            return Response(ServiceClientSerializer(found, many=True).data)
        body = ServiceClientSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        client, secret = _checked(
            service_clients.service_client_create,
            actor=request.user,
            account=account,
            name=body.validated_data["client_name"],
            jwks=body.validated_data.get("jwks") or None,
        )
        client.clientSecret = secret
        client.tokenEndpoint = metadata.endpoint("token")
        client.issuer = metadata.issuer()
        return Response(NewServiceClientSerializer(client).data, 201)

    @extend_schema(responses={204: None})
    @action(
        detail=True,
        methods=["delete"],
        url_path=r"clients/(?P<client_id>[A-Za-z0-9_-]+)",
        url_name="client",
    )
    def client(self, request: Request, pk=None, client_id=None):
        """Delete client credentials: tokens issued with them stop on their next request."""
        account = self.get_object()
        found = get_object_or_404(Client, service_account=account, client_id=client_id)
        _checked(service_clients.service_client_delete, actor=request.user, client=found)
        return Response(status=204)
