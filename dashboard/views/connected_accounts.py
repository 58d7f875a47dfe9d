"""Connected accounts (connections/): the organization's OAuth providers (admins configure
them), the signed-in person's own connections (they revoke them) and, for admins, every
member's (they revoke any). Thin: providers.py, revoking.py and flow.py hold the rules."""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_http_methods, require_POST

from accounts import policy
from accounts.policy import Action
from connections import flow, revoking
from connections import providers as service
from connections.models import Connection, Provider
from connections.presets import CHOICES

from .base import DashboardRequest, authorize, dashboard_view, page


class ProviderForm(forms.Form):
    preset = forms.ChoiceField(choices=CHOICES, initial="generic")
    key = forms.SlugField(
        max_length=50, required=False, help_text="What tools name: `connection: {provider: key}`."
    )
    name = forms.CharField(max_length=100, required=False)
    authorization_url = forms.URLField(
        required=False, assume_scheme="https", help_text="Filled by a preset."
    )
    token_url = forms.URLField(
        required=False, assume_scheme="https", help_text="Filled by a preset."
    )
    client_id = forms.CharField(max_length=300)
    client_secret = forms.CharField(
        widget=forms.PasswordInput(render_value=False),
        required=False,
        help_text="Stored encrypted; never shown again.",
    )
    scopes = forms.CharField(required=False, help_text="Space-separated; a preset fills some.")
    pkce = forms.BooleanField(required=False, initial=True, label="PKCE (S256)")
    account_mode = forms.ChoiceField(choices=Provider.ACCOUNT_MODES, initial=Provider.PER_USER)


def _values(form: ProviderForm) -> dict:
    data = dict(form.cleaned_data)
    if not data.get("scopes"):
        data.pop("scopes")
    return data


@dashboard_view
@require_http_methods(["GET", "POST"])
def connected_accounts(request: DashboardRequest):
    authorize(request, Action.VIEW)
    form = ProviderForm(request.POST or None)
    if request.method == "POST":
        authorize(request, Action.CONNECTIONS_MANAGE)
        if form.is_valid():
            try:
                provider = service.provider_create(
                    actor=request.user, organization=request.org, **_values(form)
                )
            except ValidationError as error:
                for field, problems in error.message_dict.items():
                    form.add_error(field if field in form.fields else None, problems)
            else:
                messages.success(request, f"{provider.name} added: tools name it “{provider.key}”.")
                return redirect("dashboard:connected_accounts")
    providers = Provider.objects.filter(organization=request.org)
    mine = Connection.objects.filter(organization=request.org, user=request.user).select_related(
        "provider"
    )
    everyone = (
        Connection.objects.filter(organization=request.org)
        .select_related("provider", "user")
        .order_by("provider__key", "user__email")
        if policy.role_allows(request.membership.role, Action.CONNECTIONS_MANAGE)
        else None
    )
    return page(
        request,
        "dashboard/connections/list.html",
        {
            "section": "connected_accounts",
            "providers": providers,
            "mine": mine,
            "everyone": everyone,
            "form": form,
        },
    )


@dashboard_view
@require_POST
def provider_delete(request: DashboardRequest, pk: int):
    provider = get_object_or_404(Provider, organization=request.org, pk=pk)
    authorize(request, Action.CONNECTIONS_MANAGE)
    service.provider_delete(actor=request.user, provider=provider)
    messages.success(request, f"{provider.name} removed, with every connection to it.")
    return redirect("dashboard:connected_accounts")


@dashboard_view
@require_POST
def provider_connect_shared(request: DashboardRequest, pk: int):
    """An admin connects the organization's one shared account of a shared provider."""
    provider = get_object_or_404(Provider, organization=request.org, pk=pk)
    authorize(request, Action.CONNECTIONS_MANAGE)
    if provider.per_user:
        messages.error(request, f"{provider.name} is per person: each person connects their own.")
        return redirect("dashboard:connected_accounts")
    return redirect(flow.begin(user_id=request.user.pk, provider=provider, scopes=[]))


@dashboard_view
@require_POST
def connection_revoke(request: DashboardRequest, pk: int):
    connection = get_object_or_404(
        Connection.objects.select_related("provider", "user"), organization=request.org, pk=pk
    )
    if connection.user_id == request.user.pk:
        revoking.revoke_own(user=request.user, connection=connection)
    else:
        authorize(request, Action.CONNECTIONS_MANAGE)
        revoking.revoke_member(actor=request.user, connection=connection)
    messages.success(request, f"The {connection.provider.name} connection is revoked.")
    return redirect("dashboard:connected_accounts")
