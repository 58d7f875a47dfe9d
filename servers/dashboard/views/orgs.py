"""Organizations: create, switch, rename, members and invitations, call-log retention."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import url_has_allowed_host_and_scheme, urlsafe_base64_encode
from django.utils.text import slugify
from django.views.decorators.http import require_http_methods, require_POST

from accounts.forms import InviteForm, OrganizationForm, RoleForm
from accounts.models import Membership, Organization, User
from activity import retention

from ..forms import OrganizationCreateForm
from ..scoping import SESSION_KEY, can_manage_members, membership_or_404, switch_to
from .base import dashboard_view, page


@dashboard_view
@require_POST
def switch(request):
    membership = membership_or_404(request.user, request.POST.get("organization", ""))
    switch_to(request, membership)
    messages.success(request, f"Switched to {membership.organization.name}.")
    target = request.POST.get("next") or ""
    if not url_has_allowed_host_and_scheme(target, {request.get_host()}) or "/servers/" in target:
        target = reverse("dashboard:server_list")
    return redirect(target)


@dashboard_view
@require_http_methods(["GET", "POST"])
def organization_create(request):
    form = OrganizationCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        name = form.cleaned_data["name"]
        base = slugify(name)[:60] or "org"
        slug, n = base, 1
        while Organization.objects.filter(slug=slug).exists():
            n += 1
            slug = f"{base}-{n}"
        with transaction.atomic():
            org = Organization.objects.create(name=name, slug=slug)
            membership = Membership.objects.create(
                organization=org, user=request.user, role=Membership.OWNER
            )
        switch_to(request, membership)
        messages.success(request, f"Organization “{name}” created.")
        return redirect("dashboard:server_list")
    return page(request, "dashboard/orgs/create.html", {"form": form})


def _require_manager(request):
    if not can_manage_members(request.membership):
        raise Http404("Only owners and admins manage this organization.")


@dashboard_view
@require_http_methods(["GET", "POST"])
def organization_settings(request):
    form = OrganizationForm(request.POST or None, instance=request.org)
    if request.method == "POST":
        _require_manager(request)
        if "retention_days" in request.POST:
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
        elif form.is_valid():
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


def _send_invitation(request, user: User, org: Organization, created: bool) -> None:
    site = settings.SITE_URL.rstrip("/")
    if created:
        uid = urlsafe_base64_encode(force_bytes(user.pk))
        token = default_token_generator.make_token(user)
        link = site + reverse("accounts:password_reset_confirm", args=[uid, token])
        action = f"Choose a password to activate your account:\n{link}"
    else:
        action = f"Log in to see it: {site}{reverse('accounts:login')}"
    send_mail(
        f"You have been invited to {org.name} on getmcp",
        f"{request.user.email} added you to the organization “{org.name}”.\n\n{action}\n",
        None,
        [user.email],
    )


@dashboard_view
@require_http_methods(["GET", "POST"])
def members(request):
    org = request.org
    form = InviteForm(request.POST or None, organization=org, inviter_role=request.membership.role)
    if request.method == "POST":
        _require_manager(request)
        if form.is_valid():
            email, role = form.cleaned_data["email"], form.cleaned_data["role"]
            with transaction.atomic():
                user = User.objects.filter(email__iexact=email).first()
                created = user is None
                if created:
                    # No password yet: the invitation carries a link to choose one.
                    user = User.objects.create_user(email, None)
                Membership.objects.create(organization=org, user=user, role=role)
            _send_invitation(request, user, org, created)
            messages.success(request, f"Invitation sent to {email}.")
            return redirect("dashboard:members")
    rows = org.memberships.select_related("user").order_by("created_at")
    return page(
        request,
        "dashboard/orgs/members.html",
        {"form": form, "rows": rows, "roles": Membership.ROLES},
    )


def _owners_left(org, without: Membership) -> int:
    return org.memberships.filter(role=Membership.OWNER).exclude(pk=without.pk).count()


@dashboard_view
@require_POST
def member_role(request, pk):
    _require_manager(request)
    target = get_object_or_404(request.org.memberships, pk=pk)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Pick a valid role.")
        return redirect("dashboard:members")
    role = form.cleaned_data["role"]
    touches_owner = Membership.OWNER in (role, target.role)
    if touches_owner and request.membership.role != Membership.OWNER:
        messages.error(request, "Only owners can grant or remove the owner role.")
    elif (
        target.role == Membership.OWNER
        and role != Membership.OWNER
        and not _owners_left(request.org, target)
    ):
        messages.error(request, "An organization needs at least one owner.")
    else:
        target.role = role
        target.save(update_fields=["role"])
        messages.success(request, f"{target.user.email} is now {target.get_role_display()}.")
    return redirect("dashboard:members")


@dashboard_view
@require_POST
def member_remove(request, pk):
    target = get_object_or_404(request.org.memberships, pk=pk)
    leaving = target.user_id == request.user.id
    if not leaving:
        _require_manager(request)
        if target.role == Membership.OWNER and request.membership.role != Membership.OWNER:
            raise Http404("Only owners remove owners.")
    if target.role == Membership.OWNER and not _owners_left(request.org, target):
        messages.error(request, "An organization needs at least one owner.")
        return redirect("dashboard:members")
    target.delete()
    if leaving:
        request.session.pop(SESSION_KEY, None)
        messages.success(request, f"You left {request.org.name}.")
        return redirect("dashboard:server_list")
    messages.success(request, f"{target.user.email} removed.")
    return redirect("dashboard:members")
