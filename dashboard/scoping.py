"""The one place that decides which organization a request acts for.

Every dashboard view goes through these helpers, so an organization the user is not a member of
(and everything inside it) answers 404: an outsider cannot even learn that it exists.
"""

from django.http import Http404
from django.shortcuts import get_object_or_404

from accounts.models import Membership, Organization
from servers.models import Server

SESSION_KEY = "current_org_id"


def memberships(user):
    return Membership.objects.filter(user=user).select_related("organization")


def membership_or_404(user, organization_slug: str) -> Membership:
    try:
        return memberships(user).get(organization__slug=organization_slug)
    except Membership.DoesNotExist:
        raise Http404("No such organization.") from None


def current_membership(request) -> Membership:
    """The membership of the organization stored in the session, else the user's explicit
    personal one (never whichever organization is oldest: an invitation must not change it)."""
    cached = getattr(request, "_current_membership", None)
    if cached is not None:
        return cached
    mine = memberships(request.user)
    chosen = mine.filter(organization_id=request.session.get(SESSION_KEY)).first()
    if chosen is None:
        # personal_organization() recreates it if it was deleted or the user left it.
        chosen = mine.get(organization=request.user.personal_organization())
        request.session[SESSION_KEY] = chosen.organization_id
    request._current_membership = chosen
    return chosen


def current_org(request) -> Organization:
    return current_membership(request).organization


def switch_to(request, membership: Membership) -> None:
    request.session[SESSION_KEY] = membership.organization_id
    request._current_membership = membership


def server_or_404(request, slug: str) -> Server:
    """A server of any organization the user belongs to; makes that organization the current one,
    so a link shared between teammates opens whatever organization was selected before."""
    server = get_object_or_404(
        Server.objects.select_related("organization"),
        slug=slug,
        organization__memberships__user=request.user,
    )
    if server.organization_id != request.session.get(SESSION_KEY):
        switch_to(request, memberships(request.user).get(organization_id=server.organization_id))
    return server
