from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from rest_framework import serializers

from accounts.models import ApiKey, Membership, ServiceAccount
from accounts.service_accounts import key_transfer, service_account_key_issue
from activity.models import CallLog
from activity.retention import retention_days, set_retention_days
from servers.access import problems as access_problems
from servers.models import ServerVersion
from servers.quotas import limit_problems

from .models import PersonalAccessToken
from .scoping import DefaultOrganization, MemberOrganizationField


class OrganizationSerializer(serializers.Serializer):
    slug = serializers.SlugField(read_only=True)
    name = serializers.CharField(read_only=True)
    role = serializers.SerializerMethodField()
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    callLogRetentionDays = serializers.IntegerField(
        min_value=1,
        max_value=3650,
        allow_null=True,
        required=False,
        help_text="Days call logs are kept; null (on write) goes back to the deployment default.",
    )

    monthlyCallQuota = serializers.IntegerField(
        source="monthly_call_quota",
        min_value=0,
        allow_null=True,
        required=False,
        help_text="Tool calls a month, 0 for none; null goes back to the deployment default.",
    )
    taskConcurrency = serializers.IntegerField(
        source="task_concurrency",
        min_value=1,
        max_value=1000,
        allow_null=True,
        required=False,
        help_text="Tasks running at once; null goes back to the deployment default.",
    )

    def get_role(self, org) -> str:
        membership = org.memberships.filter(user=self.context["request"].user).first()
        return membership.role if membership else ""

    def to_representation(self, org):
        org.callLogRetentionDays = retention_days(org)
        return super().to_representation(org)

    def update(self, org, validated_data):
        if "callLogRetentionDays" in validated_data:
            set_retention_days(org, validated_data["callLogRetentionDays"])
        quotas = [f for f in ("monthly_call_quota", "task_concurrency") if f in validated_data]
        if quotas:
            for field in quotas:
                setattr(org, field, validated_data[field])
            org.save(update_fields=quotas)
        return org


class UsageSerializer(serializers.Serializer):
    month = serializers.CharField()
    calls = serializers.IntegerField()
    monthlyCallQuota = serializers.IntegerField(allow_null=True)
    remaining = serializers.IntegerField(allow_null=True)
    resetsInSeconds = serializers.IntegerField()
    taskConcurrency = serializers.IntegerField()


class AccessField(serializers.JSONField):
    """ApiKey.access on the wire: keyed by server slug (stored by server id)."""

    def to_representation(self, value):
        from servers.models import Server

        ids = [int(k) for k in value or {} if str(k).isdigit()]
        slugs = dict(Server.objects.filter(pk__in=ids).values_list("pk", "slug"))
        return {slugs[int(k)]: v for k, v in (value or {}).items() if int(k) in slugs}

    def to_internal_value(self, data):
        data = super().to_internal_value(data)
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be an object keyed by server slug")
        found = [
            p for slug, limit in data.items() for p in access_problems(limit, per_server=False)
        ]
        if found:
            raise serializers.ValidationError(found)
        return data


def access_by_server_id(organization, by_slug: dict) -> dict:
    servers = dict(organization.servers.filter(slug__in=list(by_slug)).values_list("slug", "pk"))
    missing = [slug for slug in by_slug if slug not in servers]
    if missing:
        raise serializers.ValidationError(
            {"access": [f"{organization.slug} has no server {slug!r}" for slug in missing]}
        )
    return {str(servers[slug]): limit for slug, limit in by_slug.items() if limit}


class LimitsField(serializers.JSONField):
    default_help_text = (
        'Calls per minute on each server, and per tool: {"perMinute": 60, "tools": {"name": 5}}.'
    )

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("help_text", self.default_help_text)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        data = super().to_internal_value(data)
        found = limit_problems(data)
        if found:
            raise serializers.ValidationError(found)
        return data or {}


def _django_checked(call, *args, **kwargs):
    """A service's ValidationError (Django's) answered as the API's 400."""
    try:
        return call(*args, **kwargs)
    except DjangoValidationError as error:
        raise serializers.ValidationError({"detail": error.messages}) from None


class ServerSlugsField(serializers.ListField):
    def to_representation(self, servers):
        return sorted(s.slug for s in servers.all())


class ApiKeySerializer(serializers.ModelSerializer):
    organization = MemberOrganizationField(default=DefaultOrganization())
    servers = ServerSlugsField(
        child=serializers.CharField(),
        required=False,
        help_text="Slugs of the servers the key may reach; empty means every server.",
    )
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    expiresAt = serializers.DateTimeField(source="expires_at", required=False, allow_null=True)
    revokedAt = serializers.DateTimeField(source="revoked_at", read_only=True, allow_null=True)
    lastUsedAt = serializers.DateTimeField(source="last_used_at", read_only=True, allow_null=True)
    active = serializers.BooleanField(source="is_active", read_only=True)
    access = AccessField(
        required=False,
        help_text=(
            'Per server slug, what the key may use: {"<slug>": {"tools": [...], "resources": '
            '[...], "prompts": [...]}}; a server or list left out is not limited.'
        ),
    )
    limits = LimitsField(required=False)
    serviceAccount = serializers.PrimaryKeyRelatedField(
        source="service_account",
        queryset=ServiceAccount.objects.all(),
        required=False,
        allow_null=True,
        # One answer for another organization's account and a missing one: ids don't leak.
        error_messages={"does_not_exist": "no such service account in this organization"},
        help_text=(
            "The service account the key acts as; null: a personal key, acting as its creator. "
            "Changing it moves the key (admins)."
        ),
    )
    principal = serializers.SerializerMethodField(
        help_text='Who the key acts as: {"type": "person", "email"} or '
        '{"type": "service_account", "id", "name"}.'
    )

    class Meta:
        model = ApiKey
        fields = [
            "id",
            "organization",
            "name",
            "prefix",
            "servers",
            "access",
            "limits",
            "createdAt",
            "expiresAt",
            "revokedAt",
            "lastUsedAt",
            "active",
            "serviceAccount",
            "principal",
        ]
        read_only_fields = ["prefix"]

    def get_principal(self, key) -> dict:
        if key.service_account_id:
            account = key.service_account
            return {"type": "service_account", "id": account.pk, "name": account.name}
        if key.created_by_id:
            return {"type": "person", "email": key.created_by.email}
        return {"type": "none"}

    def validate_expiresAt(self, value):
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("must be in the future")
        return value

    def validate(self, attrs):
        organization = attrs.get("organization") or self.instance.organization
        if self.instance is not None and attrs.get("organization", organization) != (
            self.instance.organization
        ):
            raise serializers.ValidationError({"organization": ["cannot be changed"]})
        if "servers" in attrs:
            slugs = list(dict.fromkeys(attrs["servers"]))
            found = {s.slug: s for s in organization.servers.filter(slug__in=slugs)}
            missing = [slug for slug in slugs if slug not in found]
            if missing:
                raise serializers.ValidationError(
                    {"servers": [f"{organization.slug} has no server {slug!r}" for slug in missing]}
                )
            attrs["servers"] = [found[slug] for slug in slugs]
        if "access" in attrs:
            attrs["access"] = access_by_server_id(organization, attrs["access"])
        account = attrs.get("service_account")
        if account is not None and account.organization_id != organization.pk:
            raise serializers.ValidationError(
                {"serviceAccount": ["no such service account in this organization"]}
            )
        return attrs

    def create(self, validated_data):
        actor = self.context["request"].user
        account = validated_data.get("service_account")
        if account is not None:
            key, raw = _django_checked(
                service_account_key_issue,
                actor=actor,
                account=account,
                name=validated_data["name"],
                servers=validated_data.get("servers", ()),
                expires_at=validated_data.get("expires_at"),
            )
        else:
            key, raw = ApiKey.issue(
                validated_data["organization"],
                validated_data["name"],
                validated_data.get("servers", ()),
                expires_at=validated_data.get("expires_at"),
                created_by=actor,
            )
        if validated_data.get("access") or validated_data.get("limits"):
            key.access = validated_data.get("access") or {}
            key.limits = validated_data.get("limits") or {}
            key.save(update_fields=["access", "limits"])
        key.raw = raw
        return key

    def update(self, key, validated_data):
        if "service_account" in validated_data:
            account = validated_data["service_account"]
            if account != key.service_account:
                actor = self.context["request"].user
                _django_checked(key_transfer, actor=actor, key=key, account=account)
        for attr in ("name", "expires_at", "access", "limits"):
            if attr in validated_data:
                setattr(key, attr, validated_data[attr])
        key.save()
        if "servers" in validated_data:
            key.servers.set(validated_data["servers"])
        return key


class NewApiKeySerializer(ApiKeySerializer):
    key = serializers.SerializerMethodField(
        help_text="The raw key. Shown in this response only; only its digest is stored."
    )

    class Meta(ApiKeySerializer.Meta):
        fields = [*ApiKeySerializer.Meta.fields, "key"]

    def get_key(self, key) -> str:
        return key.raw


class TokenSerializer(serializers.ModelSerializer):
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    expiresAt = serializers.DateTimeField(source="expires_at", required=False, allow_null=True)
    revokedAt = serializers.DateTimeField(source="revoked_at", read_only=True, allow_null=True)
    lastUsedAt = serializers.DateTimeField(source="last_used_at", read_only=True, allow_null=True)
    active = serializers.BooleanField(source="is_active", read_only=True)

    class Meta:
        model = PersonalAccessToken
        fields = [
            "id",
            "name",
            "prefix",
            "createdAt",
            "expiresAt",
            "revokedAt",
            "lastUsedAt",
            "active",
        ]
        read_only_fields = ["prefix"]

    def validate_expiresAt(self, value):
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("must be in the future")
        return value

    def create(self, validated_data):
        token, raw = PersonalAccessToken.issue(
            self.context["request"].user,
            validated_data["name"],
            expires_at=validated_data.get("expires_at"),
        )
        token.raw = raw
        return token


class NewTokenSerializer(TokenSerializer):
    token = serializers.SerializerMethodField(
        help_text="The raw token. Shown in this response only; only its digest is stored."
    )

    class Meta(TokenSerializer.Meta):
        fields = [*TokenSerializer.Meta.fields, "token"]

    def get_token(self, token) -> str:
        return token.raw


class CallLogSerializer(serializers.ModelSerializer):
    organization = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    server = serializers.CharField(source="server_slug", read_only=True)
    apiKey = serializers.IntegerField(source="api_key_id", read_only=True, allow_null=True)
    keyName = serializers.CharField(source="key_name", read_only=True)
    clientName = serializers.CharField(source="client_name", read_only=True)
    clientVersion = serializers.CharField(source="client_version", read_only=True)
    userAgent = serializers.CharField(source="user_agent", read_only=True)
    clientIp = serializers.IPAddressField(source="client_ip", read_only=True, allow_null=True)
    latencyMs = serializers.FloatField(source="latency_ms", read_only=True)
    sessionId = serializers.CharField(source="session_id", read_only=True)
    requestId = serializers.CharField(source="request_id", read_only=True)
    connection = serializers.CharField(read_only=True)

    class Meta:
        model = CallLog
        fields = [
            "id",
            "at",
            "organization",
            "server",
            "surface",
            "method",
            "tool",
            "outcome",
            "error",
            "latencyMs",
            "apiKey",
            "keyName",
            "clientName",
            "clientVersion",
            "userAgent",
            "clientIp",
            "arguments",
            "sessionId",
            "requestId",
            "connection",
        ]
        read_only_fields = fields


class VersionSerializer(serializers.ModelSerializer):
    publishedAt = serializers.DateTimeField(source="published_at", read_only=True)
    publishedBy = serializers.SlugRelatedField(
        source="published_by", slug_field="email", read_only=True, allow_null=True
    )

    class Meta:
        model = ServerVersion
        fields = ["version", "publishedAt", "publishedBy"]


class VersionDetailSerializer(VersionSerializer):
    class Meta(VersionSerializer.Meta):
        fields = [*VersionSerializer.Meta.fields, "definition"]


class PublishSerializer(serializers.Serializer):
    version = serializers.CharField(
        required=False, help_text="X.Y.Z; default: the latest published with its patch bumped."
    )


class RollbackSerializer(serializers.Serializer):
    version = serializers.CharField(help_text="The published version to serve again.")


class ImportQuerySerializer(serializers.Serializer):
    organization = serializers.CharField(required=False)
    replace = serializers.BooleanField(required=False, default=False)


class AnalyticsSerializer(serializers.Serializer):
    calls = serializers.IntegerField()
    errors = serializers.IntegerField()
    tool_errors = serializers.IntegerField()
    error_rate = serializers.FloatField()
    avg_latency_ms = serializers.FloatField(allow_null=True)
    p50_latency_ms = serializers.FloatField(allow_null=True)
    p95_latency_ms = serializers.FloatField(allow_null=True)
    unique_clients = serializers.IntegerField()
    bucket = serializers.ChoiceField(choices=["hour", "day"])
    series = serializers.ListField(child=serializers.DictField())
    top_tools = serializers.ListField(child=serializers.DictField())
    clients = serializers.ListField(child=serializers.DictField())


MEMBER_ROLES = {Membership.OWNER, Membership.ADMIN}
