"""GET /api/organizations/<slug>/audit/: the organization's audit log, newest first, with the
dashboard's filters (actor, action, target, from, to); owners and admins."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView

from accounts import policy
from accounts.models import Organization
from accounts.policy import Action
from api.base import ApiMixin

from . import queries
from .models import AuditEvent


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.SerializerMethodField()
    target = serializers.SerializerMethodField()

    class Meta:
        model = AuditEvent
        fields = [
            "id",
            "at",
            "action",
            "actor",
            "address",
            "target",
            "diff",
            "hash",
            "prev_hash",
            "key_id",
        ]

    def get_actor(self, row) -> dict:
        return {"type": row.actor_type, "id": row.actor_id, "label": row.actor_label}

    def get_target(self, row) -> dict:
        return {"type": row.target_type, "id": row.target_id, "label": row.target_label}


class AuditCursor(ApiMixin.pagination_class):
    page_size = 50


PARAMETERS = [
    OpenApiParameter(name, str, description=text)
    for name, text in (
        ("actor", "Part of the actor's label (an email, a key or token name), or its type"),
        ("action", "An action (server.update) or a family (server)"),
        ("target", "A target type (tool) or part of its label"),
        ("from", "ISO 8601 date or datetime (inclusive)"),
        ("to", "ISO 8601 date (the whole day) or datetime (exclusive)"),
    )
]


class AuditLogView(ApiMixin, ListAPIView):
    serializer_class = AuditEventSerializer
    policy_exempt = True  # checked below against the organization named in the URL

    def get_queryset(self):
        organization = Organization.objects.filter(slug=self.kwargs["slug"]).first()
        if organization is None:
            raise policy.NotFound()
        policy.require(user=self.request.user, org=organization, action=Action.AUDIT_VIEW)
        try:
            filters = queries.AuditFilters.from_params(self.request.query_params)
        except queries.FilterError as exc:
            raise serializers.ValidationError({exc.field: [exc.message]}) from None
        return filters.apply(queries.events_for(organization))

    @extend_schema(parameters=PARAMETERS, operation_id="organization_audit_list")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
