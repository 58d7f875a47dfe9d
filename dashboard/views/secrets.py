"""Secrets of the organization (the vault): set, replace, delete; values are write-only.

The page also lists names that http tools refer to (`{{ secrets.NAME }}`) but nobody has set,
since that is the usual reason an imported tool fails its first test."""

import json
import re

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_http_methods, require_POST

from accounts.policy import Action
from servers.models import Tool
from vault.models import SECRET_NAME_RE, Secret

from .base import authorize, dashboard_view, page

REFERENCE = re.compile(r"secrets\.([A-Za-z_][A-Za-z0-9_]{0,63})")


class SecretForm(forms.Form):
    name = forms.RegexField(
        regex=SECRET_NAME_RE,
        max_length=64,
        help_text="Used in tool configs as {{ secrets.NAME }}.",
        error_messages={"invalid": "Letters, digits and _, not starting with a digit."},
    )
    value = forms.CharField(
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="Encrypted at rest; it can be replaced but never shown again.",
    )
    test_value = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="Optional: used by test runs instead of the value, like a sandbox token.",
    )
    server = forms.ModelChoiceField(
        queryset=None,
        required=False,
        empty_label="Every server of the organization",
        help_text="A server's own secret wins over an organization-wide one of the same name.",
    )

    def __init__(self, *args, organization, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["server"].queryset = organization.servers.order_by("name")


def _missing(organization, secrets) -> list[str]:
    configs = Tool.objects.filter(server__organization=organization).values_list(
        "config", flat=True
    )
    wanted = set()
    for config in configs:
        wanted.update(REFERENCE.findall(json.dumps(config)))
    return sorted(wanted - {s.name for s in secrets})


@dashboard_view
@require_http_methods(["GET", "POST"])
def secret_list(request: HttpRequest):
    org = request.org
    form = SecretForm(
        request.POST or None, organization=org, initial={"name": request.GET.get("name", "")}
    )
    if request.method == "POST":
        authorize(request, Action.SECRET_WRITE)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            Secret.store(
                org,
                data["name"],
                data["value"],
                test_value=data["test_value"] or None,
                server=data["server"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, f"Secret {data['name']} saved.")
            return redirect("dashboard:secret_list")
    secrets = list(org.secrets.select_related("server"))
    return page(
        request,
        "dashboard/secrets/list.html",
        {"form": form, "secrets": secrets, "missing": _missing(org, secrets)},
        status=400 if form.is_bound and form.errors else 200,
    )


@dashboard_view
@require_POST
def secret_delete(request: HttpRequest, pk: int):
    authorize(request, Action.SECRET_WRITE)
    secret = get_object_or_404(request.org.secrets, pk=pk)
    secret.delete()
    messages.success(request, f"Secret {secret.name} deleted.")
    return redirect("dashboard:secret_list")
