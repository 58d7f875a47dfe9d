"""Big servers through the API: the tool list's filters (search, enabled, kind) and one call
that enables, disables or deletes many tools. The rules are servers.bulk's, the same the
dashboard's server page follows; the role check is accounts.policy's (server.edit)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from servers.bulk import BulkAction, ToolFilter, ToolState, apply_bulk, tools_matching

from ..text import query_text

TOOL_FILTERS = [
    OpenApiParameter(
        "search", str, OpenApiParameter.QUERY, description="Text in the name, title or description."
    ),
    OpenApiParameter("enabled", OpenApiTypes.BOOL, OpenApiParameter.QUERY),
    OpenApiParameter("kind", str, OpenApiParameter.QUERY, description="static, http, code, ..."),
]


class ToolMatchSerializer(serializers.Serializer):
    search = serializers.CharField(required=False, allow_blank=True, max_length=200)
    enabled = serializers.BooleanField(required=False, allow_null=True, default=None)
    kind = serializers.CharField(required=False, allow_blank=True, max_length=20)


def tool_filter(data: dict) -> ToolFilter:
    """A validated ToolMatchSerializer's data as the domain's filter."""
    enabled = data.get("enabled")
    if enabled is None:
        state = ToolState.ANY
    else:
        state = ToolState.ENABLED if enabled else ToolState.DISABLED
    return ToolFilter(text=data.get("search", ""), state=state, kind=data.get("kind", ""))


class BulkSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=[a.value for a in BulkAction])
    ids = serializers.ListField(child=serializers.IntegerField(), required=False, max_length=10000)
    names = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=10000
    )
    match = ToolMatchSerializer(
        required=False, help_text="Every tool matching these filters (as on the tool list)."
    )

    def validate(self, attrs):
        given = [k for k in ("ids", "names", "match") if k in attrs]
        if len(given) != 1:
            raise serializers.ValidationError({"ids": ["give exactly one of ids, names or match"]})
        return attrs


class BulkResultSerializer(serializers.Serializer):
    action = serializers.CharField()
    matched = serializers.IntegerField(help_text="Tools the request named or matched.")
    changed = serializers.ListField(
        child=serializers.CharField(), help_text="Names of the tools changed."
    )


class ToolBulkActions:
    """Mixed into ToolViewSet: ?search=&enabled=&kind= on the list, and POST .../tools/bulk/."""

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        if self.action != "list":
            return queryset
        params = {name: query_text(self.request, name) for name in ("search", "enabled", "kind")}
        given = {k: v for k, v in params.items() if v not in (None, "")}
        if not given:
            return queryset
        match = ToolMatchSerializer(data=given)
        match.is_valid(raise_exception=True)
        return tools_matching(server=self.server(), match=tool_filter(match.validated_data))

    @extend_schema(request=BulkSerializer, responses={200: BulkResultSerializer})
    @action(detail=False, methods=["post"], url_path="bulk")
    def bulk(self, request, server_slug=None):
        """Enable, disable or delete many tools at once: by id, by name, or every tool matching
        filters. All of it happens or none; a tool already in the asked state is not changed."""
        server = self.server()
        body = BulkSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        if "match" in data:
            tools = tools_matching(server=server, match=tool_filter(data["match"]))
        elif "ids" in data:
            tools = server.tools.filter(pk__in=data["ids"])
        else:
            tools = server.tools.filter(name__in=data["names"])
        matched = tools.count()
        changed = apply_bulk(server=server, tools=tools, action=BulkAction(data["action"]))
        return Response({"action": data["action"], "matched": matched, "changed": changed})
