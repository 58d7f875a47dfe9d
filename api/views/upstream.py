"""Adding tools, prompts or resources from an upstream MCP server: list what it offers, then
expose the chosen ones as `upstream` rows of the server (servers/upstream/adding.py)."""

from contextlib import contextmanager
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from servers import secret_reach
from servers.upstream.adding import ADDERS, discover_part
from servers.upstream.connection import UpstreamRequestFailed, UpstreamUnreachable
from servers.upstream.target import DEFAULT_TRANSPORT, UpstreamError

from ..text import check_json


class UpstreamSerializer(serializers.Serializer):
    url = serializers.CharField(help_text="The upstream MCP server's URL.")
    transport = serializers.ChoiceField(
        choices=["streamable-http", "sse"], default=DEFAULT_TRANSPORT
    )
    headers = serializers.DictField(
        child=serializers.CharField(allow_blank=True),
        required=False,
        help_text='Sent to the upstream; values may name secrets: "Bearer {{ secrets.TOKEN }}".',
    )

    def validate(self, attrs):
        check_json(attrs, "")
        return attrs


class AddFromUpstreamSerializer(UpstreamSerializer):
    selected = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        allow_null=True,
        default=None,
        help_text="Upstream names (tools, prompts) or URIs (resources) to add; default: all.",
    )
    overrides = serializers.DictField(
        child=serializers.DictField(),
        required=False,
        help_text="Per upstream name or URI: the name, uri, title or description to use here.",
    )


class UpstreamActions:
    """Mixed into the tool, prompt and resource viewsets; the part is the viewset's list key."""

    serializer_class: Any  # the viewset's

    @extend_schema(request=UpstreamSerializer, responses={200: OpenApiTypes.OBJECT})
    @action(detail=False, methods=["post"], url_path="from-upstream/preview")
    def from_upstream_preview(self, request, server_slug=None):
        """What the upstream offers; nothing is saved."""
        body = UpstreamSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            secret_reach.require_may_send(
                server=self.server(), headers=data.get("headers"), user=request.user
            )
        except secret_reach.ReachNotApproved as exc:
            raise PermissionDenied(str(exc)) from None
        with _as_field_errors():
            offered = discover_part(
                self.server(),
                self._part_name(),
                data["url"],
                data["transport"],
                data.get("headers"),
            )
        return Response({"offered": offered})

    @extend_schema(request=AddFromUpstreamSerializer, responses={201: OpenApiTypes.OBJECT})
    @action(detail=False, methods=["post"], url_path="from-upstream")
    def from_upstream(self, request, server_slug=None):
        """Expose the selected items of the upstream as `upstream` rows of this server."""
        body = AddFromUpstreamSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            secret_reach.require_may_send(
                server=self.server(), headers=data.get("headers"), user=request.user
            )
        except secret_reach.ReachNotApproved as exc:
            raise PermissionDenied(str(exc)) from None
        with _as_field_errors():
            rows = ADDERS[self._part_name()](
                self.server(),
                data["url"],
                transport=data["transport"],
                headers=data.get("headers"),
                selected=data["selected"],
                overrides=data.get("overrides"),
            )
        secret_reach.approve_added(server=self.server(), tools=rows, user=request.user)
        serializer = self.get_serializer(rows, many=True)
        return Response(serializer.data, status=status.HTTP_201_CREATED)

    def _part_name(self) -> str:
        return self.serializer_class.list_key


@contextmanager
def _as_field_errors():
    """UpstreamError says "field: message"; an upstream that cannot be used is the url's fault."""
    try:
        yield
    except UpstreamError as exc:
        field, _, message = str(exc).partition(": ")
        if not message:
            field, message = "url", str(exc)
        raise serializers.ValidationError({field: [message]}) from None
    except UpstreamUnreachable as exc:
        raise serializers.ValidationError(
            {"url": [f"the upstream cannot be reached: {exc.reason}"]}
        ) from None
    except UpstreamRequestFailed as exc:
        # Its message is the upstream's own words: not shown, they may echo what was sent.
        raise serializers.ValidationError(
            {"url": [f"the upstream refused the request (error {exc.code})"]}
        ) from None
