"""Service accounts (accounts/service_accounts.py): the page that lists them with their keys,
and the forms that create, change, disable, delete them, give them keys and move keys to them.
Thin: every rule is the service's."""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_http_methods, require_POST

from accounts import service_accounts as service
from accounts.models import ServiceAccount
from accounts.policy import Action

from ..forms.keys import ApiKeyForm
from .base import DashboardRequest, authorize, dashboard_view, page


class ServiceAccountForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What it is, like “CI pipeline”.")
    role = forms.ChoiceField(
        choices=ServiceAccount.ROLES,
        help_text="Its keys reach what this role may, within each server's role limits.",
    )


def _account(request: DashboardRequest, pk: int) -> ServiceAccount:
    return get_object_or_404(request.org.service_accounts, pk=pk)


def _failed(request: DashboardRequest, error: ValidationError):
    messages.error(request, " ".join(error.messages))
    return redirect("dashboard:service_account_list")


@dashboard_view
@require_http_methods(["GET", "POST"])
def service_account_list(request: DashboardRequest):
    authorize(request, Action.VIEW)
    form = ServiceAccountForm(request.POST or None, initial={"role": "member"})
    if request.method == "POST":
        authorize(request, Action.SERVICE_ACCOUNTS)
        if form.is_valid():
            try:
                account = service.service_account_create(
                    actor=request.user, organization=request.org, **form.cleaned_data
                )
            except ValidationError as error:
                form.add_error("name", error)
            else:
                messages.success(request, f"Service account “{account.name}” created.")
                return redirect("dashboard:service_account_list")
    accounts = request.org.service_accounts.order_by("name").prefetch_related(
        "api_keys", "oauth_clients"
    )
    return page(
        request,
        "dashboard/service_accounts/list.html",
        {"accounts": accounts, "form": form, "roles": ServiceAccount.ROLES},
    )


@dashboard_view
@require_POST
def service_account_update(request: DashboardRequest, pk: int):
    account = _account(request, pk)
    authorize(request, Action.SERVICE_ACCOUNTS)
    try:
        service.service_account_update(
            actor=request.user,
            account=account,
            name=request.POST.get("name") or None,
            role=request.POST.get("role") or None,
        )
    except ValidationError as error:
        return _failed(request, error)
    messages.success(request, f"“{account.name}” is now a {account.role}.")
    return redirect("dashboard:service_account_list")


@dashboard_view
@require_POST
def service_account_disable(request: DashboardRequest, pk: int, disabled: bool):
    account = _account(request, pk)
    authorize(request, Action.SERVICE_ACCOUNTS)
    service.service_account_set_disabled(actor=request.user, account=account, disabled=disabled)
    state = "disabled: its keys are refused" if disabled else "enabled: its keys work again"
    messages.success(request, f"“{account.name}” {state}.")
    return redirect("dashboard:service_account_list")


@dashboard_view
@require_POST
def service_account_delete(request: DashboardRequest, pk: int):
    account = _account(request, pk)
    authorize(request, Action.SERVICE_ACCOUNTS)
    revoked = service.service_account_delete(actor=request.user, account=account)
    messages.success(request, f"“{account.name}” deleted; {revoked} key(s) revoked.")
    return redirect("dashboard:service_account_list")


@dashboard_view
@require_http_methods(["GET", "POST"])
def service_account_key_create(request: DashboardRequest, pk: int):
    account = _account(request, pk)
    authorize(request, Action.SERVICE_ACCOUNTS)
    form = ApiKeyForm(request.POST or None, organization=request.org)
    if request.method == "POST" and form.is_valid():
        try:
            key, raw = form.issue(request.user, service_account=account)
        except ValidationError as error:
            return _failed(request, error)
        response = page(
            request,
            "dashboard/keys/created.html",
            {"key": key, "raw": raw, "snippet_server": None, "snippets": []},
        )
        response["Cache-Control"] = "no-store"
        return response
    return page(request, "dashboard/keys/form.html", {"form": form, "service_account": account})


@dashboard_view
@require_POST
def key_transfer(request: DashboardRequest, pk: int):
    key = get_object_or_404(request.org.api_keys, pk=pk, revoked_at=None)
    authorize(request, Action.SERVICE_ACCOUNTS)
    authorize(request, Action.KEY_MANAGE, obj=key)
    target = request.POST.get("service_account") or ""
    account = _account(request, int(target)) if target.isdigit() else None
    try:
        service.key_transfer(actor=request.user, key=key, account=account)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("dashboard:key_list")
    messages.success(request, f"“{key.name}” now acts as {key.principal_label}.")
    return redirect("dashboard:key_list")
