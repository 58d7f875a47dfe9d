"""Connected apps: the grants a user gave, and for organization admins every grant in the
current organization, each with its last use and a revoke button."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_http_methods, require_POST

from accounts import policy
from accounts.policy import Action
from dashboard.views.base import dashboard_view, page

from .grants import grant_revoke, grants_for_organization, grants_for_user
from .models import Grant


@dashboard_view
@require_http_methods(["GET"])
def connected_apps(request):
    manages = policy.can(
        user=request.user,
        org=request.org,
        action=Action.MEMBERS_MANAGE,
        membership=request.membership,
    )
    context = {
        "mine": grants_for_user(user=request.user),
        "organization_grants": grants_for_organization(organization=request.org)
        if manages
        else None,
    }
    return page(request, "oauth/connected_apps.html", context)


@dashboard_view
@require_POST
def connected_app_revoke(request, pk: int):
    grant = get_object_or_404(Grant.objects.select_related("client"), pk=pk, revoked_at=None)
    # The one permission check of this view: your own grant, or any grant of an organization
    # you manage (the current one).
    own = grant.user_id == request.user.pk
    manages = grant.organization_id == request.org.pk and policy.can(
        user=request.user,
        org=request.org,
        action=Action.MEMBERS_MANAGE,
        membership=request.membership,
    )
    if not (own or manages):
        if grant.organization_id == request.org.pk:
            # A fellow member's app: visible in the organization, theirs or an admin's to end.
            raise PermissionDenied(policy.denial(request.membership.role, Action.MEMBERS_MANAGE))
        raise Http404("No such connected app.")
    grant_revoke(grant=grant, reason="revoked in the dashboard")
    messages.success(request, f"Disconnected {grant.client}. Its tokens stop working at once.")
    return redirect("oauth:connected_apps")
