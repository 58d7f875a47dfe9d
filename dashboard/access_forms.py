"""Dashboard forms for governance: what a key or grant may use (servers/access.py), its calls
per minute, and the organization's quotas (servers/quotas.py).

Items are ticked per server; on a server where nothing of a kind is ticked that kind is not
limited, and a server with nothing ticked at all is not limited."""

from typing import cast

from django import forms

from servers.access import KINDS

KIND_LABELS = {"tools": "tool", "resources": "resource", "prompts": "prompt"}


def item_choices(servers) -> list[tuple[str, list]]:
    """Grouped choices "<server id>|<kind>|<name>" for every tool, resource, template and prompt."""
    groups = []
    for server in servers:
        options = [(f"{server.pk}|tools|{t.name}", f"tool {t.name}") for t in server.tools.all()]
        options += [
            (f"{server.pk}|resources|{r.uri}", f"resource {r.uri}") for r in server.resources.all()
        ]
        options += [
            (f"{server.pk}|resources|{t.uri_template}", f"template {t.uri_template}")
            for t in server.resource_templates.all()
        ]
        options += [
            (f"{server.pk}|prompts|{p.name}", f"prompt {p.name}") for p in server.prompts.all()
        ]
        if options:
            groups.append((server.name or server.slug, options))
    return groups


def ticked(access: dict) -> list[str]:
    return [
        f"{server}|{kind}|{name}"
        for server, limit in (access or {}).items()
        for kind in KINDS
        for name in (limit or {}).get(kind) or ()
    ]


def access_from(values) -> dict:
    access: dict = {}
    for value in values:
        server, kind, name = value.split("|", 2)
        access.setdefault(server, {}).setdefault(kind, []).append(name)
    return access


class AccessForm(forms.Form):
    items = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Allowed tools, resources and prompts",
        help_text="Leave a server (or a kind) unticked to allow all of it.",
    )
    per_minute = forms.IntegerField(
        required=False,
        min_value=0,
        label="Calls per minute on each server",
        help_text="Tool calls; empty or 0 for the deployment default.",
    )

    def __init__(self, *args, servers, access=None, limits=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["items"]).choices = item_choices(servers)
        if not self.is_bound:
            self.initial["items"] = ticked(access)
            self.initial["per_minute"] = (limits or {}).get("perMinute")

    def access(self) -> dict:
        return access_from(self.cleaned_data["items"])

    def limits(self, old: dict) -> dict:
        limits = {k: v for k, v in (old or {}).items() if k != "perMinute"}
        if self.cleaned_data["per_minute"]:
            limits["perMinute"] = self.cleaned_data["per_minute"]
        return limits


class QuotaForm(forms.Form):
    monthly_call_quota = forms.IntegerField(
        required=False,
        min_value=0,
        label="Monthly tool calls",
        help_text="0 for no quota; empty for the deployment default.",
    )
    task_concurrency = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=1000,
        label="Tasks running at once",
        help_text="Empty for the deployment default.",
    )
