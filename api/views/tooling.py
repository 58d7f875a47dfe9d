"""Actions on a server's tools that run code: importing API descriptions and test runs."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from connections.imported import create_proposed, describe_proposals
from integrations.importers import (
    ImportFailed,
    ImportPreview,
    apply_import,
    parse_openapi,
    parse_postman,
    plan_import,
)
from integrations.importers.preview import validate_operations
from servers import secret_reach
from servers.definition import export_definition
from servers.snapshot import DefinitionError
from servers.testrun import UnknownTool, test_run_sync

from ..definition_fields import ToolSerializer
from ..text import check_json


class ApiDescriptionSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=["openapi", "postman"], default="openapi")
    document = serializers.JSONField(
        help_text="The OpenAPI/Swagger/Postman document: a JSON object, its text, or a URL."
    )
    baseUrl = serializers.URLField(required=False)
    secretPrefix = serializers.CharField(required=False)
    variables = serializers.DictField(
        child=serializers.CharField(), required=False, help_text="Postman variables."
    )

    def preview(self, organization_id: int) -> ImportPreview:
        data = self.validated_data
        check_json(data["document"], "document")
        if not isinstance(data["document"], dict | str):
            raise serializers.ValidationError({"document": ["must be an object, text or a URL"]})
        try:
            if data["format"] == "postman":
                preview = parse_postman(
                    data["document"],
                    variables=data.get("variables"),
                    secret_prefix=data.get("secretPrefix"),
                    organization_id=organization_id,
                )
            else:
                preview = parse_openapi(
                    data["document"],
                    base_url=data.get("baseUrl"),
                    secret_prefix=data.get("secretPrefix"),
                    organization_id=organization_id,
                )
        except ImportFailed as exc:
            raise serializers.ValidationError({"document": [str(exc)]}) from None
        validate_operations(preview)
        return preview


class ApiImportCommitSerializer(serializers.Serializer):
    preview = serializers.JSONField(help_text="The preview the preview step returned.")
    selected = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Tool names, operationIds or sources to import; default: all.",
    )
    removeMissing = serializers.BooleanField(
        default=False,
        help_text="Delete the server's http tools on the document's base URL that match no "
        "operation (the preview's changes.removed); only when nothing is selected.",
    )
    providers = serializers.DictField(
        child=serializers.DictField(child=serializers.CharField(allow_blank=True)),
        required=False,
        default=dict,
        help_text="For each provider the preview proposes that should be created (admins): "
        "{key: {clientId, clientSecret}}, the client the provider registered for getmcp.",
    )


class TestRunSerializer(serializers.Serializer):
    arguments = serializers.DictField(required=False, default=dict)


class ToolActions:
    """Mixed into ToolViewSet."""

    @extend_schema(request=ApiDescriptionSerializer, responses={200: OpenApiTypes.OBJECT})
    @action(detail=False, methods=["post"], url_path="import-api/preview")
    def import_api_preview(self, request, server_slug=None):
        """Parse an OpenAPI 3, Swagger 2 or Postman 2.1 document; nothing is saved."""
        server = self.server()
        body = ApiDescriptionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        preview = body.preview(server.organization_id)
        data = preview.to_dict()
        data["providers"] = describe_proposals(
            actor=request.user, organization=server.organization, proposals=preview.providers
        )
        # What committing all of it would do to this server's tools, before anything is saved.
        try:
            data["changes"] = plan_import(server, preview).to_dict()
        except ImportFailed:  # a document without operations: nothing to plan
            data["changes"] = None
        return Response(data)

    @extend_schema(request=ApiImportCommitSerializer, responses={201: ToolSerializer(many=True)})
    @action(detail=False, methods=["post"], url_path="import-api/commit")
    def import_api_commit(self, request, server_slug=None):
        """Create the selected operations of a preview as disabled (draft) http tools; those
        the server already has (same name, or same method and URL) are updated in place."""
        server = self.server()
        body = ApiImportCommitSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        check_json(body.validated_data["preview"], "preview")
        try:
            preview = ImportPreview.from_dict(body.validated_data["preview"])
            validate_operations(preview)
            broken = [op.source for op in preview.operations if op.problems and _chosen(op, body)]
            if broken:
                raise serializers.ValidationError(
                    {"selected": [f"{source}: fix its problems first" for source in broken]}
                )
            plan, tools = apply_import(
                server,
                preview,
                body.validated_data.get("selected"),
                remove_missing=body.validated_data["removeMissing"],
            )
        except ImportFailed as exc:
            field, _, message = str(exc).partition(": ")
            if not message or field not in {"selected", "preview"}:
                field, message = "preview", str(exc)
            raise serializers.ValidationError({field: [message]}) from None
        # The tools name their provider whether or not it exists yet; a missing one makes their
        # calls ask an admin for it. Creating it needs the client id the admin supplies.
        _made, notes = create_proposed(
            actor=request.user,
            organization=server.organization,
            proposals=preview.providers,
            credentials=body.validated_data["providers"],
        )
        data = ToolSerializer(tools, many=True, context=self.get_serializer_context()).data
        # The same import again (a double submit) matches the tools the first one made: the
        # same body, and 200 instead of 201 as nothing was created or changed.
        wrote = plan.of("added") or plan.of("changed") or _made
        response = Response(data, status=status.HTTP_201_CREATED if wrote else status.HTTP_200_OK)
        if notes:
            # The body stays the list of tools; what still needs an admin travels beside it.
            response["X-Import-Notes"] = " | ".join(notes)
        return response

    @extend_schema(request=TestRunSerializer, responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"])
    def test(self, request, server_slug=None, pk=None):
        """Run this tool once with the server's test secrets: the outbound request (secrets
        masked), the raw response, the MCP result and the timing."""
        tool = self.get_object()
        body = TestRunSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        check_json(body.validated_data["arguments"], "arguments")
        try:
            report = test_run_sync(
                self.server(), tool.name, body.validated_data["arguments"], user=request.user
            )
        except (UnknownTool, DefinitionError) as exc:
            raise serializers.ValidationError({"tool": [str(exc)]}) from None
        except secret_reach.ReachNotApproved as exc:
            raise PermissionDenied(str(exc)) from None
        return Response(report)

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"], url_path="approve-secrets")
    def approve_secrets(self, request, server_slug=None, pk=None):
        """Approve this tool, as its config now stands, reading the secrets it names (admins
        and owners: a member's tool that reads secrets neither test-runs nor publishes
        before). Answers which secrets it reads and whether anything new was approved."""
        tool = self.get_object()
        server = self.server()
        definition = export_definition(server)
        waiting = secret_reach.pending(server, definition, tool=tool.name)
        added = secret_reach.approve(server=server, reaches_=waiting, user=request.user)
        reach = secret_reach.reaches(definition, tool=tool.name)
        return Response(
            {
                "tool": tool.name,
                "secrets": list(reach[0].secrets) if reach else [],
                "approved": bool(added),
            }
        )


def _chosen(op, body) -> bool:
    selected = body.validated_data.get("selected")
    return selected is None or any(key in (op.name, op.operation_id, op.source) for key in selected)
