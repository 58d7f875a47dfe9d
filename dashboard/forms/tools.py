"""The tool form: a tool's kind, config, schemas, annotations, task support and agent settings."""

from django import forms
from django.urls import reverse_lazy
from django.utils.text import format_lazy

from servers import kinds
from servers.models import TOOL_NAME_RE, Tool

from ..agent_fields import ToolAgentFields
from .parts import PartForm
from .structured import StructuredField
from .tool_views import ToolViewFields

DEFAULT_KIND = kinds.DEFAULT_KIND


def kind_choices():
    """Each kind by its label, in the registry's order (the order a new user should meet them)."""
    return [(kind.name, kind.label) for kind in kinds.KINDS.values()]


def source_key(kind_name) -> str | None:
    """The config key the kind edits in the source field (kind: code's program), if any."""
    kind = kinds.find_kind(kind_name)
    return kind.form_source_key if kind is not None else None


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


class ToolForm(ToolViewFields, ToolAgentFields, PartForm):
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
        "view": "view",
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
    # A kind with a form_source_key (code: config.source) has it edited here, not in the JSON.
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
        self.init_view_fields(self.server, self.instance)
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
                self.initial.setdefault("kind", DEFAULT_KIND)
            config = self.instance.config
            key = source_key(self.instance.kind)
            if key and isinstance(config, dict) and key in config:
                self.initial["source"] = config[key]
                self.initial["config"] = {k: v for k, v in config.items() if k != key}

    def clean(self):
        data = self.cleaned_data
        key = source_key(data.get("kind"))
        if key and isinstance(data.get("config"), dict):
            data["config"] = {**data["config"], key: data.get("source") or ""}
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
            "view": self.view_value(data),
        }

    def companion_items(self, item):
        return self.view_companions(item["view"])

    def save(self, commit=True):
        self.instance.output_budget = self.tool_budget(self.cleaned_data)
        self.instance.annotations = self.annotations(self.cleaned_data)
        self.instance.execution = self.execution(self.cleaned_data)
        self.instance.view = self.view_value(self.cleaned_data)
        return super().save(commit)
