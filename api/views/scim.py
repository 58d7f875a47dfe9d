"""The organization's SCIM provisioning settings through the API (scim/tokens.py):

    GET    /api/organizations/<slug>/scim/         settings (never the token)
    PATCH  /api/organizations/<slug>/scim/         {"defaultRole", "groupRoles"}
    POST   /api/organizations/<slug>/scim/token/   a new token (rotates), answered once
    DELETE /api/organizations/<slug>/scim/token/   revoke it

Admins and owners (Action.SCIM_MANAGE)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts import policy
from accounts.models import Organization
from accounts.policy import Action
from scim import tokens

from ..base import ApiView

SETTINGS = inline_serializer(
    "ScimSettings",
    {
        "endpoint": serializers.CharField(),
        "tokenPrefix": serializers.CharField(allow_null=True),
        "tokenCreatedAt": serializers.DateTimeField(allow_null=True),
        "defaultRole": serializers.CharField(),
        "groupRoles": serializers.DictField(child=serializers.CharField()),
        "provisioned": serializers.IntegerField(),
    },
)


class _Organization:
    policy_actions = {
        "get": Action.SCIM_MANAGE,
        "patch": Action.SCIM_MANAGE,
        "post": Action.SCIM_MANAGE,
        "delete": Action.SCIM_MANAGE,
    }

    def policy_organization(self):
        organization = Organization.objects.filter(slug=self.kwargs["slug"]).first()
        if organization is None:
            raise policy.NotFound("No such organization.")
        return organization


def _settings(organization: Organization) -> dict:
    directory = tokens.directory_of(organization)
    return {
        "endpoint": settings.SITE_URL.rstrip("/") + "/scim/v2",
        "tokenPrefix": directory.token_prefix or None,
        "tokenCreatedAt": directory.token_created_at,
        "defaultRole": directory.default_role,
        "groupRoles": directory.group_roles,
        "provisioned": organization.scim_users.count(),
    }


class ScimSettingsView(_Organization, ApiView):
    @extend_schema(responses=SETTINGS, operation_id="organization_scim_retrieve")
    def get(self, request: Request, slug: str):
        return Response(_settings(self.policy_organization()))

    @extend_schema(request=SETTINGS, responses=SETTINGS, operation_id="organization_scim_update")
    def patch(self, request: Request, slug: str):
        organization = self.policy_organization()
        body = request.data if isinstance(request.data, dict) else {}
        try:
            tokens.settings_update(
                actor=request.user,
                organization=organization,
                default_role=body.get("defaultRole"),
                group_roles=body.get("groupRoles"),
            )
        except ValidationError as exc:
            names = {"default_role": "defaultRole", "group_roles": "groupRoles"}
            raise serializers.ValidationError(
                {names.get(k, k): v for k, v in exc.message_dict.items()}
            ) from None
        return Response(_settings(organization))


class ScimTokenView(_Organization, ApiView):
    @extend_schema(
        request=None,
        responses={201: inline_serializer("ScimToken", {"token": serializers.CharField()})},
        operation_id="organization_scim_token_create",
    )
    def post(self, request: Request, slug: str):
        raw = tokens.token_rotate(actor=request.user, organization=self.policy_organization())
        return Response({"token": raw}, status=201)

    @extend_schema(
        request=None, responses={204: None}, operation_id="organization_scim_token_revoke"
    )
    def delete(self, request: Request, slug: str):
        tokens.token_revoke(actor=request.user, organization=self.policy_organization())
        return Response(status=204)
