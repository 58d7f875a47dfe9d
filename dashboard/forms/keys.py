"""Issuing an API key: its servers, expiry, per-tool access and calls per minute."""

from django import forms
from django.utils import timezone

from accounts.models import ApiKey
from accounts.service_accounts import service_account_key_issue
from servers.models import Server

from ..access_forms import AccessForm, access_from


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

    def issue(self, user, *, service_account=None):
        """A personal key of `user`, or with `service_account` a key acting as that account
        (accounts/service_accounts.py checks the policy)."""
        data = self.cleaned_data
        if service_account is not None:
            key, raw = service_account_key_issue(
                actor=user,
                account=service_account,
                name=data["name"],
                servers=list(data["servers"]),
                expires_at=data["expires_at"],
            )
        else:
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
