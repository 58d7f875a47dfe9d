"""The tool form's View section: the view's settings (YAML or JSON), its custom HTML in a field
of its own, and the inputs of the generator (a template, the tool a form calls, a sample result),
which only feed static/js/tool-view.js and are never saved."""

from django import forms

from servers.models import Server, Tool
from servers.views import TEMPLATES

from .parts import TextContentField
from .structured import StructuredField

TEMPLATE_CHOICES = [
    ("table", "Table: rows, sortable and paged"),
    ("card", "Card: one record's fields"),
    ("chart-line", "Line chart of numeric series"),
    ("chart-bar", "Bar chart of numeric series"),
    ("form", "Form calling another tool"),
    ("html", "Custom HTML"),
]
assert {choice.split("-")[0] for choice, _ in TEMPLATE_CHOICES} == set(TEMPLATES)


class ToolViewFields(forms.Form):
    server: Server  # set by PartForm
    view = StructuredField(
        label="View settings",
        empty={},
        rows=10,
        # A plain textarea: the section's generator writes into it.
        widget=forms.Textarea(attrs={"rows": 10, "class": "code", "spellcheck": "false"}),
        help_text="The view, in YAML or JSON: template, title, data (where the rows are), "
        "columns, pageSize, fields, chart, tool, csp (connectDomains, resourceDomains, "
        "frameDomains, baseUriDomains), permissions, prefersBorder. Empty: no view.",
    )
    view_html = TextContentField(
        label="Custom HTML",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 14, "class": "code", "spellcheck": "false"}),
        help_text="For the html template: a whole document. McpApps (the MCP Apps SDK) is "
        "loaded before your module scripts; the host allows no origin your csp does not name.",
    )
    view_generator = forms.ChoiceField(
        label="Template", choices=TEMPLATE_CHOICES, required=False, initial="table"
    )
    view_form_tool = forms.ChoiceField(label="Tool the form calls", choices=[], required=False)
    view_sample = forms.CharField(
        label="Sample result",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "class": "code", "spellcheck": "false"}),
        help_text="A result of this tool (JSON: the whole result or its structuredContent). "
        "Without one, the output schema is used.",
    )

    def init_view_fields(self, server, instance) -> None:
        names = Tool.objects.filter(server=server).exclude(pk=instance.pk).order_by("name")
        choices = self.fields["view_form_tool"]
        assert isinstance(choices, forms.ChoiceField)
        choices.choices = [(name, name) for name in names.values_list("name", flat=True)]
        if not self.is_bound:
            view = dict(instance.view or {})
            self.initial["view_html"] = view.pop("html", "")
            self.initial["view"] = view

    def view_value(self, data) -> dict:
        view = dict(data.get("view") or {})
        html = data.get("view_html") or ""
        if html.strip() and view.get("template") == "html":
            view["html"] = html
        return view

    def view_companions(self, view: dict) -> list[dict]:
        """The tool a form view calls, as the validator needs it to know the name exists."""
        name = view.get("tool") if view.get("template") == "form" else None
        if not isinstance(name, str) or not Tool.objects.filter(server=self.server, name=name):
            return []
        return [{"name": name, "description": "", "inputSchema": {"type": "object"}}]
