"""Machine access to the authorization server (docs/oauth.md): the enterprise identity providers
an organization trusts for ID-JAG (oauth/trust.py) and service accounts' client credentials
(oauth/service_clients.py). Thin: every rule, the policy check and the audit row are the
services'."""

import orjson
from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_http_methods, require_POST

from accounts.policy import Action
from oauth import metadata, service_clients, trust
from oauth.models import Client, TrustedIssuer

from .base import DashboardRequest, authorize, dashboard_view, page


class TrustedIssuerForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Which provider, like “Acme Okta”.")
    issuer = forms.CharField(
        max_length=2000, help_text="Its issuer URL, exactly as its tokens' iss claim says it."
    )
    jwks_url = forms.CharField(
        label="JWKS URL", max_length=2000, help_text="Where it publishes its signing keys."
    )
    audience = forms.CharField(
        max_length=2000,
        required=False,
        help_text="The aud its assertions carry; empty for this authorization server's issuer.",
    )
    allowed_client_ids = forms.CharField(
        label="Allowed client ids",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Clients (as registered here) that may present its assertions, one a line; "
        "empty for any confidential client.",
    )
    subject_mapping = forms.ChoiceField(choices=TrustedIssuer.SUBJECT_MAPPINGS)
    enabled = forms.BooleanField(required=False, initial=True)


def _trust(request: DashboardRequest, pk: int) -> TrustedIssuer:
    return get_object_or_404(request.org.trusted_issuers, pk=pk)


def _form_errors(form: forms.Form, error: ValidationError) -> None:
    for field, messages_ in error.message_dict.items():
        form.add_error(field if field in form.fields else None, messages_)


@dashboard_view
@require_http_methods(["GET", "POST"])
def trusted_issuer_list(request: DashboardRequest):
    authorize(request, Action.TRUSTED_ISSUERS)
    form = TrustedIssuerForm(request.POST or None, initial={"enabled": True})
    if request.method == "POST" and form.is_valid():
        try:
            created = trust.trusted_issuer_create(
                actor=request.user, organization=request.org, values=form.cleaned_data
            )
        except ValidationError as error:
            _form_errors(form, error)
        else:
            messages.success(request, f"“{created.name}” is trusted for enterprise access.")
            return redirect("dashboard:trusted_issuer_list")
    issuers = request.org.trusted_issuers.order_by("name")
    return page(
        request,
        "dashboard/machine_access/issuers.html",
        {"issuers": issuers, "form": form, "our_issuer": metadata.issuer()},
    )


@dashboard_view
@require_http_methods(["GET", "POST"])
def trusted_issuer_edit(request: DashboardRequest, pk: int):
    current = _trust(request, pk)
    authorize(request, Action.TRUSTED_ISSUERS)
    initial = {
        **{name: getattr(current, name) for name in trust.FIELDS},
        "allowed_client_ids": "\n".join(current.allowed_client_ids),
    }
    form = TrustedIssuerForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            trust.trusted_issuer_update(actor=request.user, trust=current, values=form.cleaned_data)
        except ValidationError as error:
            _form_errors(form, error)
        else:
            messages.success(request, f"“{current.name}” saved.")
            return redirect("dashboard:trusted_issuer_list")
    return page(
        request, "dashboard/machine_access/issuer_edit.html", {"trust": current, "form": form}
    )


@dashboard_view
@require_POST
def trusted_issuer_delete(request: DashboardRequest, pk: int):
    current = _trust(request, pk)
    authorize(request, Action.TRUSTED_ISSUERS)
    trust.trusted_issuer_delete(actor=request.user, trust=current)
    messages.success(request, f"“{current.name}” is no longer trusted; its tokens stopped.")
    return redirect("dashboard:trusted_issuer_list")


class ServiceClientForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="What uses them, like “nightly agent”.")
    jwks = forms.CharField(
        label="Public keys (JWKS, optional)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "class": "mono"}),
        help_text="For private_key_jwt: the JSON key set its client assertions are signed with "
        "(public keys only). Empty: a client secret, shown once.",
    )

    def clean_jwks(self):
        text = self.cleaned_data["jwks"].strip()
        if not text:
            return None
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise forms.ValidationError("Not JSON.") from None
        if not isinstance(value, dict):
            raise forms.ValidationError('A JSON key set: {"keys": [...]}.')
        return value


@dashboard_view
@require_http_methods(["GET", "POST"])
def service_client_create(request: DashboardRequest, pk: int):
    account = get_object_or_404(request.org.service_accounts, pk=pk)
    authorize(request, Action.SERVICE_ACCOUNTS)
    form = ServiceClientForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            client, secret = service_clients.service_client_create(
                actor=request.user, account=account, **form.cleaned_data
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            response = page(
                request,
                "dashboard/machine_access/client_created.html",
                {
                    "account": account,
                    "client": client,
                    "secret": secret,
                    "token_endpoint": metadata.endpoint("token"),
                    "issuer": metadata.issuer(),
                },
            )
            response["Cache-Control"] = "no-store"
            return response
    return page(
        request, "dashboard/machine_access/client_form.html", {"account": account, "form": form}
    )


@dashboard_view
@require_POST
def service_client_delete(request: DashboardRequest, pk: int):
    client = get_object_or_404(
        Client.objects.filter(service_account__organization=request.org), pk=pk
    )
    authorize(request, Action.SERVICE_ACCOUNTS)
    service_clients.service_client_delete(actor=request.user, client=client)
    messages.success(request, f"Client credentials “{client.client_name}” deleted.")
    return redirect("dashboard:service_account_list")
