from typing import cast

from django import forms

from .models import SSO_ROLES


class StartForm(forms.Form):
    """“Sign in with SSO”: a work email (its domain finds the organization) or the
    organization's identifier."""

    email = forms.EmailField(
        required=False,
        label="Work email",
        widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}),
    )
    organization = forms.SlugField(
        required=False,
        label="Or your organization's identifier",
        widget=forms.TextInput(attrs={"autocomplete": "organization"}),
    )

    def clean(self):
        data = super().clean()
        if not data.get("email") and not data.get("organization"):
            raise forms.ValidationError("Enter your work email or your organization's identifier.")
        return data


def mapping_text(mapping: dict) -> str:
    return "\n".join(f"{group} = {role}" for group, role in mapping.items())


class ConnectionForm(forms.Form):
    issuer = forms.URLField(
        max_length=500,
        label="Issuer URL",
        help_text="The provider's issuer, exactly as its discovery document names it.",
        assume_scheme="https",
    )
    client_id = forms.CharField(max_length=255, label="Client ID")
    client_secret = forms.CharField(
        required=False,
        label="Client secret",
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}, render_value=False),
    )
    allowed_domains = forms.CharField(
        label="Allowed email domains",
        help_text="Separated by commas or spaces, e.g. corp.example, corp-eu.example.",
    )
    default_role = forms.ChoiceField(
        choices=SSO_ROLES,
        label="Role of people who join through SSO",
        help_text="When none of their groups is mapped below.",
    )
    groups_claim = forms.CharField(max_length=100, initial="groups", label="Groups claim")
    role_mapping = forms.CharField(
        required=False,
        label="Group to role mapping",
        widget=forms.Textarea(
            attrs={"rows": 4, "placeholder": "engineering = member\nplatform-admins = admin"}
        ),
        help_text="One “group = role” per line (admin, member or viewer). With a mapping, each "
        "sign-in sets the role the person's groups map to; owners are never changed.",
    )
    required = forms.BooleanField(
        required=False,
        label="SSO required: members may not sign in with a password (owners still may)",
    )
    enabled = forms.BooleanField(required=False, initial=True, label="Enabled")

    def __init__(self, *args, secret_set: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        secret = cast(forms.CharField, self.fields["client_secret"])
        if secret_set:
            secret.help_text = "•••••••• saved. Leave empty to keep it."
            secret.widget.attrs["placeholder"] = "••••••••"
        else:
            secret.help_text = "Empty for a public client (PKCE only)."

    def clean_role_mapping(self) -> dict:
        mapping = {}
        for number, line in enumerate(self.cleaned_data["role_mapping"].splitlines(), 1):
            if not line.strip():
                continue
            group, sep, role = line.rpartition("=")
            if not sep or not group.strip():
                raise forms.ValidationError(f"Line {number}: write “group = role”.")
            mapping[group.strip()] = role.strip().lower()
        return mapping
