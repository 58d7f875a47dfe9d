"""One rule for every view: a user sees the objects of the organizations they are a member of,
and anything else answers 404, exactly like something that does not exist."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.models import Organization
from servers.models import Server

from .text import storable


def member_organizations(user):
    return Organization.objects.filter(memberships__user=user)


def scoped(queryset, user, organization_path: str = "organization"):
    return queryset.filter(**{f"{organization_path}__memberships__user": user})


def server_of(user, slug: str) -> Server:
    return get_object_or_404(scoped(Server.objects.all(), user), slug=slug)


@extend_schema_field(OpenApiTypes.STR)
class MemberOrganizationField(serializers.SlugRelatedField):
    """An organization named by slug, among the user's own; others read as nonexistent."""

    default_error_messages = {
        "does_not_exist": "You have no organization {slug_name}={value}.",
        "invalid": "Invalid value.",
    }

    def __init__(self, **kwargs) -> None:
        super().__init__(slug_field="slug", **kwargs)

    def get_queryset(self):
        return member_organizations(self.context["request"].user)

    def to_internal_value(self, data):
        if isinstance(data, str) and not storable(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class DefaultOrganization:
    """The user's personal organization when the request names none."""

    requires_context = True

    def __call__(self, field):
        return field.context["request"].user.personal_organization()
