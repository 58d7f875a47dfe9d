"""OAuth providers for connected accounts over the API (connections/providers.py holds every
rule): list, create from a preset or generic endpoints, change, delete. The client secret is
write-only: answers say only whether one is set."""

from rest_framework import serializers

from accounts.policy import Action
from connections import providers as service
from connections.models import Provider
from connections.presets import CHOICES

from .base import ManagedViewSet
from .scoping import DefaultOrganization, MemberOrganizationField
from .serializers import _django_checked as _checked


class ProviderSerializer(serializers.ModelSerializer):
    organization = MemberOrganizationField(default=DefaultOrganization())
    preset = serializers.ChoiceField(choices=CHOICES, default="generic")
    key = serializers.SlugField(max_length=50, required=False)
    name = serializers.CharField(max_length=100, required=False)
    authorizationUrl = serializers.URLField(source="authorization_url", required=False)
    tokenUrl = serializers.URLField(source="token_url", required=False)
    revocationUrl = serializers.URLField(source="revocation_url", required=False, allow_blank=True)
    clientId = serializers.CharField(source="client_id", max_length=300)
    clientSecret = serializers.CharField(
        source="client_secret", write_only=True, required=False, allow_blank=True
    )
    clientSecretSet = serializers.SerializerMethodField()
    clientAuth = serializers.ChoiceField(
        source="client_auth",
        choices=["client_secret_post", "client_secret_basic"],
        required=False,
    )
    scopes = serializers.ListField(child=serializers.CharField(), required=False)
    pkce = serializers.BooleanField(required=False)
    extraAuthorizeParams = serializers.DictField(
        source="extra_authorize_params", child=serializers.CharField(), required=False
    )
    accountMode = serializers.ChoiceField(
        source="account_mode", choices=Provider.ACCOUNT_MODES, required=False
    )

    class Meta:
        model = Provider
        fields = [
            "id",
            "organization",
            "preset",
            "key",
            "name",
            "authorizationUrl",
            "tokenUrl",
            "revocationUrl",
            "clientId",
            "clientSecret",
            "clientSecretSet",
            "clientAuth",
            "scopes",
            "pkce",
            "extraAuthorizeParams",
            "accountMode",
        ]

    def get_clientSecretSet(self, provider) -> bool:
        return bool(provider.client_secret_ciphertext)

    def create(self, validated_data):
        data = dict(validated_data)
        organization = data.pop("organization")
        return _checked(
            service.provider_create,
            actor=self.context["request"].user,
            organization=organization,
            **data,
        )

    def update(self, provider, validated_data):
        data = dict(validated_data)
        if data.pop("organization", provider.organization) != provider.organization:
            raise serializers.ValidationError({"organization": ["cannot be changed"]})
        data.pop("key", None)
        data.pop("preset", None)
        return _checked(
            service.provider_update, actor=self.context["request"].user, provider=provider, **data
        )


class ProviderViewSet(ManagedViewSet):
    """OAuth 2.0 providers the organization's tools connect people to."""

    queryset = Provider.objects.select_related("organization").order_by("key", "id")
    serializer_class = ProviderSerializer
    manage_action = Action.CONNECTIONS_MANAGE

    def perform_destroy(self, provider) -> None:
        service.provider_delete(actor=self.request.user, provider=provider)
