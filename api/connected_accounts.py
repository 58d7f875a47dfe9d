"""Connected accounts over the API, by the dashboard's rules (dashboard/views/
connected_accounts.py): everyone lists and revokes their own connections; admins
(CONNECTIONS_MANAGE) also list and revoke every member's and the shared ones. A connection the
caller may not see reads as nonexistent. connections/revoking.py holds the revocation."""

from django.db.models import Q
from rest_framework import mixins, serializers
from rest_framework.exceptions import PermissionDenied

from accounts import policy
from accounts.models import Membership
from accounts.policy import Action
from connections import revoking
from connections.models import Connection

from .base import ScopedViewSet


class ConnectionSerializer(serializers.ModelSerializer):
    organization = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    provider = serializers.CharField(source="provider.key", read_only=True)
    providerName = serializers.CharField(source="provider.name", read_only=True)
    person = serializers.SerializerMethodField()
    expiresAt = serializers.DateTimeField(source="expires_at", read_only=True)
    lastUsedAt = serializers.DateTimeField(source="last_used_at", read_only=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = Connection
        fields = [
            "id",
            "organization",
            "provider",
            "providerName",
            "person",
            "status",
            "scopes",
            "expiresAt",
            "lastUsedAt",
            "createdAt",
        ]
        read_only_fields = fields

    def get_person(self, connection) -> str | None:
        """The person's email; null for the organization's one shared account."""
        return connection.user.email if connection.user_id else None


class ConnectionViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, ScopedViewSet
):
    """Accounts connected to the organizations' OAuth providers; DELETE revokes one (at the
    provider too, where it has a revocation endpoint)."""

    queryset = Connection.objects.select_related("organization", "provider", "user").order_by(
        "provider__key", "user__email", "id"
    )
    serializer_class = ConnectionSerializer
    # Revoking one's own needs no more than membership; another's needs CONNECTIONS_MANAGE,
    # which get_object and revoking.revoke_member check.
    policy_actions = {"destroy": Action.VIEW}

    def _managed(self) -> list[int]:
        return [
            m.organization_id
            for m in Membership.objects.filter(user=self.request.user).only(
                "organization_id", "role"
            )
            if policy.role_allows(m.role, Action.CONNECTIONS_MANAGE)
        ]

    def get_queryset(self):
        queryset = super().get_queryset()
        if self.action == "list":  # one's own, and all of the organizations one manages
            queryset = queryset.filter(
                Q(user=self.request.user) | Q(organization_id__in=self._managed())
            )
        return queryset

    def get_object(self):
        connection = super().get_object()
        if connection.user_id != self.request.user.pk and (
            connection.organization_id not in self._managed()
        ):
            # In the caller's organization, so not hidden: refused, as other API objects are.
            raise PermissionDenied("Only admins reach other people's connections.")
        return connection

    def perform_destroy(self, connection) -> None:
        if connection.user_id == self.request.user.pk:
            revoking.revoke_own(user=self.request.user, connection=connection)
        else:
            revoking.revoke_member(actor=self.request.user, connection=connection)
