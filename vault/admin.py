from django import forms
from django.contrib import admin

from .models import NetworkAllowance, Secret


class SecretForm(forms.ModelForm):
    """Values go in, never come out: the fields start empty and blank means "keep"."""

    value = forms.CharField(
        widget=forms.PasswordInput(render_value=False),
        required=False,
        help_text="Leave empty to keep the current value.",
    )
    test_value = forms.CharField(
        widget=forms.PasswordInput(render_value=False),
        required=False,
        help_text="Used only by test runs. Leave empty to keep the current one.",
    )

    class Meta:
        model = Secret
        fields = ["organization", "server", "name"]

    def clean(self):
        cleaned = super().clean()
        if not self.instance.pk and not cleaned.get("value"):
            self.add_error("value", "A new secret needs a value.")
        return cleaned

    def save(self, commit: bool = True):
        secret = super().save(commit=False)
        if self.cleaned_data.get("value"):
            secret.set_value(self.cleaned_data["value"])
        if self.cleaned_data.get("test_value"):
            secret.set_test_value(self.cleaned_data["test_value"])
        if commit:
            secret.save()
        return secret


@admin.register(Secret)
class SecretAdmin(admin.ModelAdmin):
    form = SecretForm
    list_display = ["name", "organization", "server", "has_test_value", "updated_at"]
    list_filter = ["organization"]
    search_fields = ["name", "organization__name", "server__slug"]
    raw_id_fields = ["organization", "server"]

    @admin.display(boolean=True)
    def has_test_value(self, obj):
        return bool(obj.test_ciphertext)


@admin.register(NetworkAllowance)
class NetworkAllowanceAdmin(admin.ModelAdmin):
    list_display = ["cidr", "organization", "note", "created_by", "created_at"]
    search_fields = ["cidr", "organization__name", "organization__slug"]
    raw_id_fields = ["organization"]
    readonly_fields = ["created_by", "created_at"]

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
