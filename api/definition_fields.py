"""Serializers whose fields are the server-as-code format's (camelCase wire names), validated by
servers.definition.validate_definition so the API, import and export share one set of rules."""

import re
from typing import Any

from django.db import IntegrityError, models, transaction
from rest_framework import serializers

from servers import definition as d
from servers import destination_checks, parts
from servers.models import Server

from .scoping import DefaultOrganization, MemberOrganizationField
from .text import check_json

REQUIRED = {
    "server": {"slug", "name"},
    "tools": {"name", "description", "inputSchema"},
    "resources": {"uri", "name"},
    "resourceTemplates": {"uriTemplate", "name"},
    "prompts": {"name", "description"},
}
MAX_INTEGER = {models.PositiveIntegerField: 2**31 - 1, models.PositiveBigIntegerField: 2**63 - 1}
_PATH_HEAD = re.compile(r"^([^.\[]+)(.*)$")


def wire_field(model, wire: str, attr: str, required: bool) -> serializers.Field:
    field = model._meta.get_field(attr)
    options: dict[str, Any] = {"required": required}
    if wire != attr:
        options["source"] = attr
    if isinstance(field, models.JSONField):
        return serializers.JSONField(allow_null=field.null, validators=[check_json], **options)
    if isinstance(field, models.BooleanField):
        return serializers.BooleanField(**options)
    if isinstance(field, models.IntegerField):
        return serializers.IntegerField(
            min_value=0,
            max_value=MAX_INTEGER.get(type(field), 2**31 - 1),
            allow_null=field.null,
            **options,
        )
    return serializers.CharField(
        allow_blank=not required,
        allow_null=field.null,
        trim_whitespace=False,
        max_length=field.max_length,
        **options,
    )


def wire_values(instance, spec) -> dict:
    return {wire: getattr(instance, attr) for wire, attr, _ in spec}


def field_errors(errors: list[str], prefix: str) -> dict[str, list[str]]:
    """Messages like "tools[3].inputSchema.type: must be 'object'" under their top field."""
    out: dict[str, list[str]] = {}
    for error in errors:
        if prefix and not error.startswith((f"{prefix}.", f"{prefix}:")):
            continue
        path, _, message = error[len(prefix) :].lstrip(".").partition(": ")
        match = _PATH_HEAD.match(path)
        if not match:
            out.setdefault("non_field_errors", []).append(message or path)
            continue
        head, rest = match.groups()
        out.setdefault(head, []).append(f"{rest.lstrip('.')}: {message}" if rest else message)
    return out


def _defaulted(value, default):
    # The same rule as import: an explicit null for a field with a default means the default.
    return default if value is None and default is not None else value


class ServerSerializer(serializers.Serializer):
    spec = d.SERVER_FIELDS

    id = serializers.IntegerField(read_only=True)
    organization = MemberOrganizationField(default=DefaultOrganization())
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    def get_fields(self):
        fields = super().get_fields()
        for wire, attr, _ in self.spec:
            fields[wire] = wire_field(Server, wire, attr, wire in REQUIRED["server"])
        return fields

    def validate(self, attrs):
        if self.instance is not None and attrs.get("organization", self.instance.organization) != (
            self.instance.organization
        ):
            raise serializers.ValidationError({"organization": ["cannot be changed"]})
        candidate = wire_values(self.instance, self.spec) if self.instance else {}
        for wire, attr, default in self.spec:
            if attr in attrs:
                candidate[wire] = _defaulted(attrs[attr], default)
        candidate = {k: v for k, v in candidate.items() if v is not None}
        errors = field_errors(d.validate_definition(candidate), "")
        slug = candidate.get("slug")
        taken = Server.objects.filter(slug=slug)
        if self.instance is not None:
            taken = taken.exclude(pk=self.instance.pk)
        if slug and "slug" not in errors and taken.exists():
            errors["slug"] = ["already taken"]
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def _apply(self, server, attrs):
        for _wire, attr, default in self.spec:
            if attr in attrs:
                setattr(server, attr, _defaulted(attrs[attr], default))
        try:
            with transaction.atomic():
                server.save()
        except IntegrityError:
            raise serializers.ValidationError({"slug": ["already taken"]}) from None
        return server

    def create(self, validated_data):
        server = Server(organization=validated_data["organization"])
        for _wire, attr, default in self.spec:
            if default is not None:
                setattr(server, attr, default)
        return self._apply(server, validated_data)

    def update(self, instance, validated_data):
        validated_data.pop("organization", None)
        return self._apply(instance, validated_data)


class PartSerializer(serializers.Serializer):
    """A tool, resource, resource template or prompt of the server in context["server"]."""

    list_key = ""

    id = serializers.IntegerField(read_only=True)
    position = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False)

    @property
    def part(self):
        return d.PARTS[self.list_key]

    def get_fields(self):
        fields = super().get_fields()
        model, spec, _, _ = self.part
        for wire, attr, _ in spec:
            fields[wire] = wire_field(model, wire, attr, wire in REQUIRED[self.list_key])
        return fields

    def validate(self, attrs):
        server = self.context["server"]
        model, spec, _, related = self.part
        item = wire_values(self.instance, spec) if self.instance else {}
        for wire, attr, default in spec:
            if attr in attrs:
                item[wire] = _defaulted(attrs[attr], default)
        item = {k: v for k, v in item.items() if v is not None}
        # The others as they are, this one last: a duplicate name is reported on this item.
        rows = getattr(server, related).order_by("position", "id")
        others = [
            wire_values(row, spec)
            for row in rows
            if self.instance is None or row.pk != self.instance.pk
        ]
        others = [{k: v for k, v in o.items() if v is not None} for o in others]
        definition = {"slug": server.slug, "name": server.name, self.list_key: [*others, item]}
        errors = field_errors(d.validate_definition(definition), f"{self.list_key}[{len(others)}]")
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def _apply(self, row, attrs, *, new: bool = False):
        _, spec, _, related = self.part
        for _wire, attr, default in spec:
            if attr in attrs:
                setattr(row, attr, _defaulted(attrs[attr], default))
        if "position" in attrs:
            row.position = attrs["position"]
        try:
            if new:
                parts.part_create(
                    server=self.context["server"],
                    related=related,
                    row=row,
                    position=attrs.get("position"),
                )
            else:
                with transaction.atomic():
                    row.save()
        except IntegrityError:
            raise serializers.ValidationError(
                {"non_field_errors": ["another item of this server has the same name or URI"]}
            ) from None
        return row

    def create(self, validated_data):
        model, spec, _, related = self.part
        server = self.context["server"]
        row = model(server=server)
        for _wire, attr, default in spec:
            if default is not None:
                setattr(row, attr, default)
        return self._apply(row, validated_data, new=True)

    def update(self, instance, validated_data):
        return self._apply(instance, validated_data)


class ToolSerializer(PartSerializer):
    list_key = "tools"

    warnings = serializers.SerializerMethodField(
        help_text="Problems that do not stop the save, e.g. a URL on loopback or a private "
        "network that the outbound guard will refuse, with how the operator can allow it."
    )

    def get_warnings(self, row) -> list[str]:
        server = self.context.get("server")
        if server is None:
            return []
        # One read of the allow-lists per request, however many tools a list holds.
        networks = self.context.get("_outbound_networks")
        if networks is None:
            networks = destination_checks.allowed_networks(server.organization_id)
            self.context["_outbound_networks"] = networks
        return destination_checks.tool_warnings(
            wire_values(row, self.part[1]), server, networks=networks
        )


class ResourceSerializer(PartSerializer):
    list_key = "resources"


class ResourceTemplateSerializer(PartSerializer):
    list_key = "resourceTemplates"


class PromptSerializer(PartSerializer):
    list_key = "prompts"
