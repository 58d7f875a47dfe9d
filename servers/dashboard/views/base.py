"""What every dashboard view shares: login, the current organization, and rendering with it."""

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from ..scoping import can_manage_members, current_membership, memberships
from ..snippets import endpoint_url


def dashboard_view(view):
    """Login required; `request.membership` and `request.org` set through the scoping helper."""

    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        request.membership = current_membership(request)
        request.org = request.membership.organization
        return view(request, *args, **kwargs)

    return wrapper


def page(request, template: str, context: dict | None = None, status: int = 200):
    membership = current_membership(request)
    base = {
        "org": membership.organization,
        "membership": membership,
        "all_memberships": memberships(request.user).order_by("organization__name"),
        "can_manage_members": can_manage_members(membership),
    }
    context = {**base, **(context or {})}
    if "server" in context and context["server"] is not None:
        context.setdefault("server_url", endpoint_url(context["server"]))
    return render(request, template, context, status=status)
