"""An organization's members through the API:

    GET    /api/organizations/<slug>/members/        who is in it, with their roles
    DELETE /api/organizations/<slug>/members/<id>/   remove someone (or leave: your own id)

Removal is accounts.services.membership_remove, the dashboard's: it deprovisions the person
(accounts/deprovision.py: keys suspended, grants revoked, MCP sessions, streams and inspector
sockets ended, `member_deprovisioned` sent) and checks the policy itself (admins remove members,
owners remove owners, anyone may leave)."""

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from accounts import policy, services
from accounts.models import Membership, Organization
from accounts.policy import Action

from ..base import ApiView

MEMBERS = inline_serializer(
    "Member",
    {
        "id": serializers.IntegerField(),
        "email": serializers.EmailField(),
        "name": serializers.CharField(),
        "role": serializers.CharField(),
        "joinedAt": serializers.DateTimeField(),
    },
    many=True,
)


class _Organization:
    # Removing takes more than VIEW; accounts.services.membership_remove decides exactly what.
    policy_actions = {"delete": Action.VIEW}

    def policy_organization(self):
        organization = Organization.objects.filter(slug=self.kwargs["slug"]).first()
        if organization is None:
            raise policy.NotFound("No such organization.")
        return organization


def _member(membership: Membership) -> dict:
    return {
        "id": membership.pk,
        "email": membership.user.email,
        "name": membership.user.name,
        "role": membership.role,
        "joinedAt": membership.created_at,
    }


class MemberListView(_Organization, ApiView):
    pagination_class = None  # type: ignore[assignment]  # few members: one list

    @extend_schema(responses=MEMBERS, operation_id="organization_members_list")
    def get(self, request: Request, slug: str):
        organization = self.policy_organization()
        rows = organization.memberships.select_related("user").order_by("created_at", "pk")
        return Response([_member(m) for m in rows])


class MemberDetailView(_Organization, ApiView):
    @extend_schema(request=None, responses={204: None}, operation_id="organization_member_remove")
    def delete(self, request: Request, slug: str, pk: int):
        organization = self.policy_organization()
        membership = (
            organization.memberships.select_related("user", "organization").filter(pk=pk).first()
        )
        if membership is None:
            raise NotFound("No such member.")
        try:
            services.membership_remove(actor=request.user, membership=membership)
        except ValidationError as exc:
            raise serializers.ValidationError({"": exc.messages}) from None
        return Response(status=204)
