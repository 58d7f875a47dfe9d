"""What every dashboard view shares: login, the current organization, the role check, and
rendering with them."""

from collections.abc import Callable
from functools import wraps
from typing import Any, cast

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts import policy
from accounts.models import Membership, Organization, User
from accounts.services import invitations_pending_for

from ..scoping import current_membership, memberships
from ..snippets import endpoint_url


class DashboardRequest(HttpRequest):
    """The request a `dashboard_view` hands on: a signed-in user, the organization being worked
    on and the user's membership of it. Declares for the type checker what the decorator sets;
    no instance of it is ever made."""

    user: User
    membership: Membership
    org: Organization


def dashboard_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Login required; `request.membership` and `request.org` set through the scoping helper."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        typed = cast(DashboardRequest, request)
        typed.membership = current_membership(request)
        typed.org = typed.membership.organization
        return view(typed, *args, **kwargs)

    return wrapper


def authorize(request: DashboardRequest, action: policy.Action, *, org=None, obj=None) -> None:
    """The one role check of a dashboard view (accounts.policy decides): 404 outside the
    organization, 403 when the role does not allow it."""
    org = org or request.org
    current = current_membership(request)  # server_or_404 may have switched it
    membership = current if current.organization_id == org.pk else None
    policy.require(user=request.user, org=org, action=action, obj=obj, membership=membership)


def page(request: DashboardRequest, template: str, context: dict | None = None, status: int = 200):
    membership = current_membership(request)
    allowed = policy.allowed(membership.role)
    base = {
        "org": membership.organization,
        "membership": membership,
        "all_memberships": memberships(request.user).order_by("organization__name"),
        "can": allowed,
        "can_manage_members": allowed["members_manage"],
        "invitations_for_me": invitations_pending_for(user=request.user).count(),
    }
    context = {**base, **(context or {})}
    if "server" in context and context["server"] is not None:
        context.setdefault("server_url", endpoint_url(context["server"]))
    return render(request, template, context, status=status)
