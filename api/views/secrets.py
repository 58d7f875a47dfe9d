from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from rest_framework import serializers

from accounts.policy import Action
from vault.models import Secret

from ..base import CrudViewSet, OrganizationFilterMixin
from ..scoping import DefaultOrganization, MemberOrganizationField


class SecretSerializer(serializers.ModelSerializer):
    """Write-only values: `value` and `testValue` go in and are never sent back."""

    organization = MemberOrganizationField(default=DefaultOrganization())
    server = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="Slug of the one server this secret is for; null: every server.",
    )
    value = serializers.CharField(write_only=True, trim_whitespace=False, max_length=65536)
    testValue = serializers.CharField(
        write_only=True,
        required=False,
        allow_null=True,
        trim_whitespace=False,
        max_length=65536,
        help_text="Used by test runs instead of value. null removes it.",
    )
    hasTestValue = serializers.SerializerMethodField()
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    class Meta:
        model = Secret
        fields = [
            "id",
            "organization",
            "server",
            "name",
            "value",
            "testValue",
            "hasTestValue",
            "createdAt",
            "updatedAt",
        ]
        # Uniqueness is checked in validate(), with the server resolved from its slug.
        validators: list[object] = []

    def get_hasTestValue(self, secret) -> bool:
        return bool(secret.test_ciphertext)

    def to_representation(self, secret):
        data = super().to_representation(secret)
        data["server"] = secret.server.slug if secret.server_id else None
        return data

    def get_fields(self):
        fields = super().get_fields()
        if self.instance is not None and not isinstance(self.instance, list | tuple):
            # A secret's identity is fixed; only its values are replaced.
            for name in ("organization", "server", "name"):
                fields[name].read_only = True
            fields["value"].required = False
        return fields

    def validate(self, attrs):
        if self.instance is None:
            slug = attrs.get("server")
            attrs["server"] = None
            if slug:
                attrs["server"] = attrs["organization"].servers.filter(slug=slug).first()
                if attrs["server"] is None:
                    raise serializers.ValidationError(
                        {"server": [f"{attrs['organization'].slug} has no server {slug!r}"]}
                    )
            exists = Secret.objects.filter(
                organization=attrs["organization"], server=attrs["server"], name=attrs["name"]
            ).exists()
            if exists:
                raise serializers.ValidationError(
                    {"name": ["already exists here; PATCH it to replace its value"]}
                )
        return attrs

    def _save(self, secret, attrs):
        if "value" in attrs:
            secret.set_value(attrs["value"])
        if "testValue" in attrs:
            secret.set_test_value(attrs["testValue"])
        try:
            secret.full_clean(exclude=["ciphertext", "test_ciphertext"])
            with transaction.atomic():
                secret.save()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        except IntegrityError:
            raise serializers.ValidationError({"name": ["already exists here"]}) from None
        return secret

    def create(self, validated_data):
        secret = Secret(
            organization=validated_data["organization"],
            server=validated_data["server"],
            name=validated_data["name"],
        )
        return self._save(secret, validated_data)

    def update(self, secret, validated_data):
        return self._save(secret, validated_data)


class SecretViewSet(OrganizationFilterMixin, CrudViewSet):
    """Secrets of your organizations, referenced as `{{ secrets.NAME }}` by http tools.
    Values are write-only: no response ever contains one."""

    queryset = Secret.objects.select_related("organization", "server").order_by("name", "id")
    serializer_class = SecretSerializer
    policy_actions = {
        "create": Action.SECRET_WRITE,
        "update": Action.SECRET_WRITE,
        "partial_update": Action.SECRET_WRITE,
        "destroy": Action.SECRET_WRITE,
    }
