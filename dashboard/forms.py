"""Dashboard forms. Server parts are checked by the same validator as imports
(servers.definition.validate_definition), so the dashboard can never save what an import refuses,
and every message lands next to the field it names."""

import json
import re

from django import forms
from django.urls import reverse_lazy
from django.utils import timezone
from django.utils.text import format_lazy

from accounts.models import ApiKey
from servers import documents, kinds, parts
from servers.definition import validate_definition
from servers.models import (
    SLUG_RE,
    TOOL_NAME_RE,
    Prompt,
    Resource,
    ResourceTemplate,
    Server,
    Tool,
)

from .access_forms import AccessForm, access_from
from .agent_fields import AgentSettingsFields, ToolAgentFields

ORIGIN_RE = re.compile(r"^https?://[^/\s?#]+$")
# Dashboard paths under /servers/ that a server slug would shadow.
RESERVED_SLUGS = {"new"}


def pretty(value) -> str:
    if value in (None, "", {}, []) and not isinstance(value, dict | list):
        return ""
    return json.dumps(value, indent=2, ensure_ascii=False)


class StructuredField(forms.CharField):
    """A JSON (or YAML) document typed into a textarea; cleans to the parsed value."""

    def __init__(
        self, *, expect=(dict,), empty=None, rows=8, allow_yaml=True, schema_check=None, **kwargs
    ):
        kwargs.setdefault("required", False)
        # data-code-editor makes it an editor (static/js/code-editor.js); data-schema-check
        # adds the server's JSON Schema errors to it, inline.
        attrs = {
            "rows": rows,
            "spellcheck": "false",
            "class": "code",
            "data-json-editor": "",
            "data-code-editor": "yaml" if allow_yaml else "json",
        }
        if schema_check is not None:  # a lazy URL: evaluating it here would import the URLconf
            attrs["data-schema-check"] = schema_check
        kwargs.setdefault("widget", forms.Textarea(attrs=attrs))
        super().__init__(strip=False, **kwargs)
        self.expect = expect
        self.empty = empty
        self.allow_yaml = allow_yaml

    def prepare_value(self, value):
        if isinstance(value, str):
            return value
        return pretty(value)

    def to_python(self, value):
        if value is None or not str(value).strip():
            return self.empty
        text = str(value)
        # Strict like the definition loader (servers.documents): a repeated key is refused,
        # never "the last one wins", so what the editor shows is what is stored.
        try:
            parsed = documents.load_json(text)
        except documents.DocumentError as json_error:
            if json_error.line is None:
                problem = json_error.problem.removeprefix("invalid JSON: ")
                raise forms.ValidationError(f"Not accepted: {problem}.") from None
            problem = json_error.problem.removeprefix("invalid JSON: ")
            not_json = forms.ValidationError(
                f"Not valid JSON: {problem} (line {json_error.line}, column {json_error.column})."
            )
            if not self.allow_yaml:
                raise not_json from None
            try:
                parsed = documents.load_yaml(text)
            except documents.DocumentError as exc:
                if exc.line is None or "alias" in exc.problem or "duplicate key" in exc.problem:
                    # Not a typo in the text: what YAML allows and this platform refuses.
                    raise forms.ValidationError(f"Not accepted: {exc.problem}.") from None
                raise not_json from None
        if not isinstance(parsed, self.expect):
            names = " or ".join("an object" if t is dict else "a list" for t in self.expect)
            raise forms.ValidationError(f"Must be {names}.")
        return parsed


class ServerForm(AgentSettingsFields, forms.ModelForm):
    allowed_origins = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "class": "code"}),
        help_text="One per line, like https://app.example.com. Browsers on other origins are "
        "refused; clients without an Origin header (Claude, Cursor, SDKs) are not affected.",
    )
    slug = forms.RegexField(
        regex=SLUG_RE,
        max_length=63,
        help_text="Part of the endpoint URL: lowercase letters, digits and dashes.",
        error_messages={
            "invalid": "Use 2-63 lowercase letters, digits and dashes, starting with a letter "
            "or digit."
        },
    )

    class Meta:
        model = Server
        fields = ["name", "slug", "title", "instructions", "auth_mode", "status", "allowed_origins"]
        widgets = {"instructions": forms.Textarea(attrs={"rows": 4})}
        help_texts = {
            "name": "Shown to clients as serverInfo.name.",
            "instructions": "Optional guidance sent to the model when a client connects.",
            "auth_mode": "API key: clients send Authorization: Bearer <key>. OAuth: people "
            "sign in to getmcp from their client (claude.ai, ChatGPT, Claude Desktop) and "
            "consent. None: anyone with the URL can call it.",
            "status": "Paused answers 503; draft is not reachable at all.",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk and not self.is_bound:
            self.initial["allowed_origins"] = "\n".join(self.instance.allowed_origins or [])
        if not self.is_bound:
            self.initial_agent_settings(self.instance.agents)

    def save(self, commit=True):
        self.instance.agents = self.agent_settings(self.cleaned_data, self.instance.agents)
        return super().save(commit)

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if slug in RESERVED_SLUGS:
            raise forms.ValidationError(f"“{slug}” is reserved; pick another slug.")
        # Slugs are global (they are the endpoint URL), so the owner may be another organization.
        if Server.objects.filter(slug=slug).exclude(pk=self.instance.pk).exists():
            raise forms.ValidationError(f"“{slug}” is taken; pick another slug.")
        return slug

    def clean_allowed_origins(self):
        origins = [
            line.strip().rstrip("/") for line in self.cleaned_data["allowed_origins"].split()
        ]
        bad = [o for o in origins if o and not ORIGIN_RE.match(o)]
        if bad:
            raise forms.ValidationError(
                f"Not an origin: {', '.join(bad)}. Use scheme and host only, like "
                "https://app.example.com."
            )
        return [o for o in origins if o]


class PartForm(forms.ModelForm):
    """A form for one server part, validated by the definition validator.

    `wire` maps wire names (as the validator reports them) to form field names."""

    list_key = ""
    wire: dict[str, str] = {}

    def __init__(self, *args, server, **kwargs):
        super().__init__(*args, **kwargs)
        self.server = server

    def as_definition_item(self, data: dict) -> dict:
        raise NotImplementedError

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        item = self.as_definition_item(data)
        document = {"slug": "check", "name": "check", self.list_key: [item]}
        prefix = f"{self.list_key}[0]"
        try:
            problems = validate_definition(document)
        except RecursionError:
            problems = [f"{prefix}: nested too deeply"]
        for message in problems:
            path, _, text = message.partition(": ")
            path = path.removeprefix(prefix).lstrip(".")
            top = re.split(r"[.\[]", path, maxsplit=1)[0]
            field = self.wire.get(top)
            detail = f"{path}: {text}" if path not in ("", top) else text
            if field in self.fields:
                self.add_error(field, detail)
            else:
                self.add_error(None, f"{path or 'item'}: {text}")
        return data

    def save(self, commit=True):
        row = super().save(commit=False)
        row.server = self.server
        if commit:
            if row.pk is None:
                related = type(row)._meta.get_field("server").remote_field.related_name
                parts.part_create(server=self.server, related=related, row=row)
            else:
                row.save()
        return row


# How each kind is named in the dashboard, in the order a new user should meet them (static
# first, as the empty state suggests); a kind missing here is listed after them, capitalised.
KIND_LABELS = {
    "static": "Static",
    "workflow": "Workflow",
    "http": "HTTP",
    "upstream": "Upstream MCP server",
    "code": "Code (Python)",
}
DEFAULT_KIND = "static"


def kind_choices():
    known = [name for name in KIND_LABELS if name in kinds.KINDS]
    others = sorted(name for name in kinds.KINDS if name not in KIND_LABELS)
    return [(name, KIND_LABELS.get(name, name.capitalize())) for name in known + others]


TASK_SUPPORT_CHOICES = [
    ("forbidden", "Never: an ordinary call (the default)"),
    ("optional", "Optional: the client may run it as a task"),
    ("required", "Required: clients must run it as a task"),
]


ANNOTATION_HINTS = [
    ("readOnlyHint", "Read-only", "It does not modify its environment."),
    ("destructiveHint", "Destructive", "It may perform destructive updates."),
    (
        "idempotentHint",
        "Idempotent",
        "Calling it twice with the same arguments has no extra effect.",
    ),
    ("openWorldHint", "Open world", "It interacts with external entities."),
]


class ToolForm(ToolAgentFields, PartForm):
    list_key = "tools"
    wire = {
        "name": "name",
        "title": "title",
        "description": "description",
        "inputSchema": "input_schema",
        "outputSchema": "output_schema",
        "kind": "kind",
        "config": "config",
        "enabled": "enabled",
        "annotations": "read_only",
        "execution": "task_support",
        "pinned": "pinned",
        "outputBudget": "budget_max_chars",
    }
    name = forms.RegexField(
        regex=TOOL_NAME_RE,
        max_length=64,
        help_text="What the model calls: letters, digits, _ . / - (at most 64).",
        error_messages={
            "invalid": "Use only letters, digits and _ . / - (no spaces or accents), "
            "like get_weather."
        },
    )
    kind = forms.ChoiceField(
        choices=kind_choices,
        initial=DEFAULT_KIND,
        help_text="What happens when the tool is called.",
    )
    task_support = forms.ChoiceField(
        choices=TASK_SUPPORT_CHOICES,
        initial="forbidden",
        required=False,
        label="Run as a task",
        help_text="execution.taskSupport: a task answers at once with a task id; the client "
        "polls its status, answers its questions and fetches the result later, so a long call "
        "survives a dropped connection.",
    )
    input_schema = StructuredField(
        label="Input schema",
        required=True,
        allow_yaml=False,
        rows=12,
        help_text="A JSON Schema (draft 2020-12) of the arguments; its type must be object.",
        schema_check=reverse_lazy("dashboard:schema_check"),
    )
    output_schema = StructuredField(
        label="Output schema",
        allow_yaml=False,
        rows=6,
        help_text="Optional: a JSON Schema of structuredContent.",
        schema_check=format_lazy("{}?object=0", reverse_lazy("dashboard:schema_check")),
    )
    config = StructuredField(
        rows=14,
        empty={},
        help_text="The kind's configuration, in JSON or YAML. Strings may use {{ argument }}.",
    )
    # kind: code keeps its program in config.source; it is edited here, not inside the JSON.
    source = forms.CharField(
        required=False,
        strip=False,
        label="Python source",
        widget=forms.Textarea(
            attrs={
                "rows": 18,
                "class": "code",
                "spellcheck": "false",
                "data-code-editor": "python",
            }
        ),
        help_text="A module defining async def main(args, ctx) or def main(args); what main "
        "returns is the result. Checked for syntax on save.",
    )
    read_only = forms.BooleanField(required=False, label="Read-only")
    destructive = forms.BooleanField(required=False, label="Destructive")
    idempotent = forms.BooleanField(required=False, label="Idempotent")
    open_world = forms.BooleanField(required=False, label="Open world")
    HINT_FIELDS = {
        "read_only": "readOnlyHint",
        "destructive": "destructiveHint",
        "idempotent": "idempotentHint",
        "open_world": "openWorldHint",
    }

    class Meta:
        model = Tool
        fields = [
            "name",
            "title",
            "description",
            "kind",
            "input_schema",
            "output_schema",
            "config",
            "enabled",
            "pinned",
        ]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
        help_texts = {
            "description": "Tells the model what the tool does and when to use it.",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            annotations = self.instance.annotations or {}
            for field, hint in self.HINT_FIELDS.items():
                self.initial[field] = bool(annotations.get(hint))
            execution = self.instance.execution or {}
            self.initial["task_support"] = execution.get("taskSupport", "forbidden")
            self.initial_tool_budget(self.instance.output_budget)
            if not self.instance.pk:
                self.initial.setdefault(
                    "input_schema", {"type": "object", "properties": {}, "required": []}
                )
                # Without it the browser picks the first kind in the list.
                self.initial.setdefault("kind", "static")
            config = self.instance.config
            if self.instance.kind == "code" and isinstance(config, dict) and "source" in config:
                self.initial["source"] = config["source"]
                self.initial["config"] = {k: v for k, v in config.items() if k != "source"}

    def clean(self):
        data = self.cleaned_data
        if data.get("kind") == "code" and isinstance(data.get("config"), dict):
            data["config"] = {**data["config"], "source": data.get("source") or ""}
        return super().clean()

    def add_error(self, field, error):
        # The definition validator names config.source; its messages belong by the source field.
        if field == "config" and isinstance(error, str) and error.startswith("config.source: "):
            field, error = "source", error.removeprefix("config.source: ")
        super().add_error(field, error)

    def clean_name(self):
        name = self.cleaned_data["name"]
        clash = Tool.objects.filter(server=self.server, name=name).exclude(pk=self.instance.pk)
        if clash.exists():
            raise forms.ValidationError("Another tool of this server has this name.")
        return name

    def annotations(self, data) -> dict:
        kept = {
            k: v
            for k, v in (self.instance.annotations or {}).items()
            if k not in self.HINT_FIELDS.values()
        }
        for field, hint in self.HINT_FIELDS.items():
            if data.get(field):
                kept[hint] = True
        return kept

    def execution(self, data) -> dict:
        """The tool's `execution`, with taskSupport as chosen; "forbidden" (the protocol's
        default) is left out, so a tool that never runs as a task has no execution at all."""
        kept = {k: v for k, v in (self.instance.execution or {}).items() if k != "taskSupport"}
        support = data.get("task_support") or "forbidden"
        if support != "forbidden":
            kept["taskSupport"] = support
        return kept

    def as_definition_item(self, data):
        return {
            "name": data["name"],
            "title": data.get("title") or "",
            "description": data.get("description") or "",
            "inputSchema": data.get("input_schema"),
            "outputSchema": data.get("output_schema"),
            "annotations": self.annotations(data),
            "execution": self.execution(data),
            "kind": data["kind"],
            "config": data.get("config") or {},
            "enabled": bool(data.get("enabled")),
            "pinned": bool(data.get("pinned")),
            "outputBudget": self.tool_budget(data),
        }

    def save(self, commit=True):
        self.instance.output_budget = self.tool_budget(self.cleaned_data)
        self.instance.annotations = self.annotations(self.cleaned_data)
        self.instance.execution = self.execution(self.cleaned_data)
        return super().save(commit)


class ResourceForm(PartForm):
    list_key = "resources"
    wire = {
        "uri": "uri",
        "name": "name",
        "title": "title",
        "description": "description",
        "mimeType": "mime_type",
        "text": "content",
        "blob": "content",
        "size": "content",
    }
    content = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 10, "class": "code", "spellcheck": "false"}),
    )
    is_base64 = forms.BooleanField(
        required=False, label="Binary content (the text above is base64)"
    )

    class Meta:
        model = Resource
        fields = ["uri", "name", "title", "description", "mime_type"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}
        help_texts = {"uri": "An absolute URI, like docs://guide or file:///notes.md."}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_bound and self.instance.pk:
            self.initial["is_base64"] = self.instance.blob is not None
            self.initial["content"] = (
                self.instance.blob if self.instance.blob is not None else self.instance.text
            )

    def clean_uri(self):
        uri = self.cleaned_data["uri"]
        clash = Resource.objects.filter(server=self.server, uri=uri).exclude(pk=self.instance.pk)
        if clash.exists():
            raise forms.ValidationError("Another resource of this server has this URI.")
        return uri

    def as_definition_item(self, data):
        key = "blob" if data.get("is_base64") else "text"
        item = {"uri": data["uri"], "name": data["name"], key: data.get("content") or ""}
        for wire_key, field in (
            ("title", "title"),
            ("description", "description"),
            ("mimeType", "mime_type"),
        ):
            item[wire_key] = data.get(field) or ""
        return item

    def save(self, commit=True):
        content = self.cleaned_data.get("content") or ""
        binary = self.cleaned_data.get("is_base64")
        self.instance.text = None if binary else content
        self.instance.blob = content if binary else None
        return super().save(commit)


class ResourceTemplateForm(PartForm):
    list_key = "resourceTemplates"
    wire = {
        "uriTemplate": "uri_template",
        "name": "name",
        "title": "title",
        "description": "description",
        "mimeType": "mime_type",
        "text": "text",
        "blob": "text",
        "completions": "completions",
    }
    text = forms.CharField(
        strip=False,
        widget=forms.Textarea(attrs={"rows": 8, "class": "code", "spellcheck": "false"}),
        help_text="The content of a read; {{ variable }} is replaced by the URI's variables.",
    )
    completions = StructuredField(
        empty={},
        rows=4,
        help_text='Suggested values per variable, like {"id": ["1", "2"]}.',
    )

    class Meta:
        model = ResourceTemplate
        fields = [
            "uri_template",
            "name",
            "title",
            "description",
            "mime_type",
            "text",
            "completions",
        ]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}
        help_texts = {"uri_template": "An RFC 6570 template, like notes://{id}."}

    def as_definition_item(self, data):
        return {
            "uriTemplate": data["uri_template"],
            "name": data["name"],
            "title": data.get("title") or "",
            "description": data.get("description") or "",
            "mimeType": data.get("mime_type") or "",
            "text": data.get("text") or "",
            "completions": data.get("completions") or {},
        }


class PromptForm(PartForm):
    list_key = "prompts"
    wire = {
        "name": "name",
        "title": "title",
        "description": "description",
        "arguments": "arguments",
        "messages": "messages",
        "completions": "completions",
    }
    arguments = StructuredField(
        expect=(list,),
        empty=[],
        rows=5,
        help_text='Like [{"name": "who", "description": "Who to greet", "required": true}].',
    )
    messages = StructuredField(
        expect=(list,),
        empty=[],
        rows=8,
        help_text='Like [{"role": "user", "content": {"type": "text", "text": "Hello {{ who }}"}}].',
    )
    completions = StructuredField(empty={}, rows=3, help_text="Suggested values per argument.")

    class Meta:
        model = Prompt
        fields = ["name", "title", "description", "arguments", "messages", "completions"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["description"].required = True
        if not self.is_bound and not self.instance.pk:
            self.initial.setdefault(
                "messages", [{"role": "user", "content": {"type": "text", "text": ""}}]
            )

    def clean_name(self):
        name = self.cleaned_data["name"]
        clash = Prompt.objects.filter(server=self.server, name=name).exclude(pk=self.instance.pk)
        if clash.exists():
            raise forms.ValidationError("Another prompt of this server has this name.")
        return name

    def as_definition_item(self, data):
        return {
            "name": data["name"],
            "title": data.get("title") or "",
            "description": data.get("description") or "",
            "arguments": data.get("arguments") or [],
            "messages": data.get("messages") or [],
            "completions": data.get("completions") or {},
        }


class ApiKeyForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Where it is used, like “Claude Code laptop”.")
    servers = forms.ModelMultipleChoiceField(
        queryset=Server.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Leave all unticked to allow every server of the organization.",
    )
    expires_at = forms.DateTimeField(
        required=False,
        label="Expires",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        help_text="Optional (UTC). Leave empty for a key that never expires.",
    )

    def __init__(self, *args, organization, **kwargs):
        super().__init__(*args, **kwargs)
        self.organization = organization
        self.fields["servers"].queryset = organization.servers.order_by("name")
        # Per-tool access and calls per minute (servers/access.py), ticked like on the key's
        # Access page.
        self.fields.update(AccessForm(servers=self.fields["servers"].queryset).fields)

    def clean_expires_at(self):
        expires = self.cleaned_data["expires_at"]
        if expires and expires <= timezone.now():
            raise forms.ValidationError("Pick a time in the future.")
        return expires

    def issue(self, user):
        data = self.cleaned_data
        key, raw = ApiKey.issue(
            self.organization,
            data["name"],
            servers=list(data["servers"]),
            expires_at=data["expires_at"],
            created_by=user,
        )
        key.access = access_from(data.get("items") or [])
        key.limits = {"perMinute": data["per_minute"]} if data.get("per_minute") else {}
        key.save(update_fields=["access", "limits"])
        return key, raw


class OrganizationCreateForm(forms.Form):
    name = forms.CharField(max_length=150, label="Organization name")
