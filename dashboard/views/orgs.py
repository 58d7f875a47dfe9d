"""Organizations: create, switch, rename, members and invitations, call-log retention.
Thin views: accounts.services does the work and checks the role table (accounts.policy)."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from accounts import services
from accounts.forms import InviteForm, OrganizationForm, RoleForm
from accounts.models import Invitation, Membership
from accounts.policy import Action, grantable_roles
from activity import retention
from dashboard.views.base import DashboardRequest

from ..forms.organizations import OrganizationCreateForm
from ..scoping import SESSION_KEY, membership_or_404, switch_to
from .base import authorize, dashboard_view, page


@dashboard_view
@require_POST
def switch(request: DashboardRequest):
    membership = membership_or_404(request.user, request.POST.get("organization", ""))
    switch_to(request, membership)
    messages.success(request, f"Switched to {membership.organization.name}.")
    target = request.POST.get("next") or ""
    if not url_has_allowed_host_and_scheme(target, {request.get_host()}) or "/servers/" in target:
        target = reverse("dashboard:server_list")
    return redirect(target)


@dashboard_view
@require_http_methods(["GET", "POST"])
def organization_create(request: DashboardRequest):
    form = OrganizationCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        name = form.cleaned_data["name"]
        try:
            membership = services.organization_create(user=request.user, name=name)
        except ValidationError as exc:  # the organizations-per-person cap (accounts.billing)
            form.add_error(None, exc)
        else:
            switch_to(request, membership)
            messages.success(request, f"Organization “{name}” created.")
            return redirect("dashboard:server_list")
    return page(request, "dashboard/orgs/create.html", {"form": form})


@dashboard_view
@require_http_methods(["GET", "POST"])
def organization_settings(request: DashboardRequest):
    form = OrganizationForm(request.POST or None, instance=request.org)
    if request.method == "POST":
        if "retention_days" in request.POST:
            authorize(request, Action.ORG_QUOTAS)
            raw = request.POST.get("retention_days", "").strip()
            try:
                days = int(raw) if raw else None
                if days is not None and not 1 <= days <= 3650:
                    raise ValueError
            except ValueError:
                messages.error(request, "Retention must be a number of days from 1 to 3650.")
            else:
                retention.set_retention_days(request.org, days)
                messages.success(request, "Retention saved.")
                return redirect("dashboard:organization_settings")
        else:
            authorize(request, Action.ORG_SETTINGS)
            if form.is_valid():
                form.save()
                messages.success(request, "Organization saved.")
                return redirect("dashboard:organization_settings")
    return page(
        request,
        "dashboard/orgs/settings.html",
        {
            "form": form,
            "retention_days": retention.retention_days(request.org),
            "default_retention_days": retention.default_retention_days(),
        },
    )


@dashboard_view
@require_http_methods(["GET", "POST"])
def members(request: DashboardRequest):
    org = request.org
    roles = grantable_roles(request.membership.role)
    form = InviteForm(request.POST or None, roles=roles)
    if request.method == "POST":
        authorize(request, Action.MEMBERS_MANAGE)
        if form.is_valid():
            email, role = form.cleaned_data["email"], form.cleaned_data["role"]
            try:
                services.membership_invite(
                    actor=request.user, organization=org, email=email, role=role
                )
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    form.add_error(field if field in form.fields else None, errors)
            else:
                messages.success(
                    request, f"Invitation sent to {email}. They join once they accept it."
                )
                return redirect("dashboard:members")
    rows = org.memberships.select_related("user").order_by("created_at")
    return page(
        request,
        "dashboard/orgs/members.html",
        {
            "form": form,
            "rows": rows,
            "roles": roles,
            "invitations": services.invitations_pending_in(organization=org).order_by(
                "-created_at"
            ),
        },
        status=400 if form.is_bound and form.errors else 200,
    )


@dashboard_view
@require_POST
def invitation_revoke(request: DashboardRequest, pk: int):
    authorize(request, Action.MEMBERS_MANAGE)
    invitation = get_object_or_404(request.org.invitations, pk=pk, state=Invitation.PENDING)
    services.invitation_revoke(actor=request.user, invitation=invitation)
    messages.success(request, f"Invitation to {invitation.email} revoked.")
    return redirect("dashboard:members")


@dashboard_view
@require_POST
def member_role(request: DashboardRequest, pk: int):
    authorize(request, Action.MEMBERS_MANAGE)
    target = get_object_or_404(request.org.memberships.select_related("user"), pk=pk)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Pick a valid role.")
        return redirect("dashboard:members")
    role = form.cleaned_data["role"]
    if Membership.OWNER in (role, target.role):
        authorize(request, Action.OWNERS_MANAGE)
    try:
        services.membership_change_role(actor=request.user, membership=target, role=role)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"{target.user.email} is now {target.get_role_display()}.")
    return redirect("dashboard:members")


@dashboard_view
@require_POST
def member_remove(request: DashboardRequest, pk: int):
    target = get_object_or_404(request.org.memberships.select_related("user"), pk=pk)
    leaving = target.user_id == request.user.id
    if not leaving:
        authorize(request, Action.MEMBERS_MANAGE)
        if target.role == Membership.OWNER:
            authorize(request, Action.OWNERS_MANAGE)
    try:
        services.membership_remove(actor=request.user, membership=target)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("dashboard:members")
    if leaving:
        request.session.pop(SESSION_KEY, None)
        messages.success(request, f"You left {request.org.name}.")
        return redirect("dashboard:server_list")
    messages.success(request, f"{target.user.email} removed.")
    return redirect("dashboard:members")
