"""Forms for a server's parts. Each is checked by the same validator as imports
(servers.definition.validate_definition), so the dashboard can never save what an import
refuses, and every message lands next to the field it names. The tool form: tools.py."""

import re

from django import forms

from servers import parts
from servers.definition import validate_definition
from servers.models import Prompt, Resource, ResourceTemplate

from .structured import StructuredField


class TextContentField(forms.CharField):
    """Text typed into a textarea, with line ends as LF: browsers send a textarea's lines
    CRLF-separated (HTML's form encoding), and a resource's bytes must be what was typed, the
    same as its YAML import or API write would store."""

    def to_python(self, value):
        text = super().to_python(value)
        return text.replace("\r\n", "\n").replace("\r", "\n") if text else text


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

    def companion_items(self, item: dict) -> list[dict]:
        """Other parts of the server the item refers to, checked along with it (a tool's form
        view names another tool)."""
        return []

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        item = self.as_definition_item(data)
        items = [item, *self.companion_items(item)]
        document = {"slug": "check", "name": "check", self.list_key: items}
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
    content = TextContentField(
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
    text = TextContentField(
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
