"""Providers and connections in the Django admin: secrets and tokens never come out (the
client secret is write-only; tokens are not shown at all)."""

from django import forms
from django.contrib import admin

from .models import Connection, Provider


class ProviderForm(forms.ModelForm):
    client_secret = forms.CharField(
        widget=forms.PasswordInput(render_value=False),
        required=False,
        help_text="Leave empty to keep the current one.",
    )

    class Meta:
        model = Provider
        exclude = ["client_secret_ciphertext"]

    def save(self, commit: bool = True):
        provider = super().save(commit=False)
        if self.cleaned_data.get("client_secret"):
            provider.set_client_secret(self.cleaned_data["client_secret"])
        if commit:
            provider.save()
        return provider


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    form = ProviderForm
    list_display = ["key", "name", "organization", "preset", "account_mode", "pkce"]
    list_filter = ["preset", "account_mode"]
    search_fields = ["key", "name", "organization__name"]


@admin.register(Connection)
class ConnectionAdmin(admin.ModelAdmin):
    list_display = ["provider", "user", "organization", "status", "expires_at", "last_used_at"]
    list_filter = ["status"]
    search_fields = ["provider__key", "user__email", "organization__name"]
    exclude = ["access_token_ciphertext", "refresh_token_ciphertext"]
    readonly_fields = [
        "provider",
        "organization",
        "user",
        "token_type",
        "scopes",
        "expires_at",
        "version",
        "refreshed_at",
        "last_used_at",
    ]

    def has_add_permission(self, request) -> bool:
        return False  # a connection is made by its person's consent, never typed in
