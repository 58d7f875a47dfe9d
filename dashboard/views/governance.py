"""Governance pages: a key's access and limits, and the organization's usage against quota."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_http_methods

from accounts.policy import Action
from dashboard.views.base import DashboardRequest
from servers.quotas import usage

from ..access_forms import AccessForm, QuotaForm
from .base import authorize, dashboard_view, page


@dashboard_view
@require_http_methods(["GET", "POST"])
def key_access(request: DashboardRequest, pk: int):
    key = get_object_or_404(request.org.api_keys, pk=pk, revoked_at=None)
    authorize(request, Action.KEY_MANAGE, obj=key)
    servers = list(key.servers.all()) or list(request.org.servers.order_by("name"))
    form = AccessForm(
        request.POST if request.method == "POST" else None,
        servers=servers,
        access=key.access,
        limits=key.limits,
    )
    if request.method == "POST" and form.is_valid():
        key.access = form.access()
        key.limits = form.limits(key.limits)
        key.save(update_fields=["access", "limits"])
        messages.success(request, f"Key “{key.name}” updated. Open sessions see it at once.")
        return redirect("dashboard:key_list")
    return page(
        request,
        "dashboard/governance/access.html",
        {"form": form, "subject": f"API key “{key.name}”", "back": "dashboard:key_list"},
    )


@dashboard_view
@require_http_methods(["GET", "POST"])
def usage_page(request: DashboardRequest):
    authorize(request, Action.VIEW)
    org = request.org
    form = QuotaForm(
        request.POST or None,
        initial={
            "monthly_call_quota": org.monthly_call_quota,
            "task_concurrency": org.task_concurrency,
        },
    )
    if request.method == "POST":
        authorize(request, Action.ORG_QUOTAS)
        if form.is_valid():
            org.monthly_call_quota = form.cleaned_data["monthly_call_quota"]
            org.task_concurrency = form.cleaned_data["task_concurrency"]
            org.save(update_fields=["monthly_call_quota", "task_concurrency"])
            messages.success(request, "Quotas saved.")
            return redirect("dashboard:usage")
    current = usage(org)
    quota = current["monthlyCallQuota"]
    percent = min(100, round(100 * current["calls"] / quota)) if quota else None
    return page(
        request,
        "dashboard/governance/usage.html",
        {"usage": current, "percent": percent, "form": form, "section": "usage"},
    )
