"""The paying account behind organizations, and how many organizations one person may pay for.

Organizations cost nothing to make, so any share given per organization can be multiplied by
making more of them. What must not be multiplied counts by the paying account instead
(`Organization.billing_owner`): the code-tool sandbox's shares (servers/kinds/code/shares.py)
and stored results (gateway/agents/results.py). And ORGANIZATIONS_PER_PERSON (0: no cap) caps
how many organizations one person pays for, checked wherever one is created (a new organization
from the dashboard, a personal organization made again from the API, the dashboard or a command)
and where one is passed to another person.

This module imports no models (accounts.models calls it): it reaches them through the objects
it is given.
"""

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError


class OrganizationLimitReached(ValidationError):
    """The person already pays for as many organizations as one person may."""


def organization_limit() -> int:
    return max(0, int(settings.ORGANIZATIONS_PER_PERSON))


def limit_message(limit: int, *, who: str = "You") -> str:
    verb = "pay" if who == "You" else "pays"
    return (
        f"{who} already {verb} for {limit} organization{'s' if limit != 1 else ''}, the most one "
        f"person may on this platform (ORGANIZATIONS_PER_PERSON). Pass one to another owner, or "
        "ask the operator to raise the limit."
    )


def require_room(user: Any, *, who: str = "You") -> None:
    """OrganizationLimitReached when `user` may pay for no more organizations. Must run inside
    a transaction: the user's row is locked first, so two creations at once cannot both pass."""
    limit = organization_limit()
    if not limit or user is None:
        return
    locked = user._meta.model.objects.select_for_update().filter(pk=user.pk)
    list(locked.values_list("pk", flat=True))
    if user.billed_organizations.count() >= limit:
        raise OrganizationLimitReached(limit_message(limit, who=who), code="organization_limit")


def pass_on(organization: Any, *, leaving: Any) -> None:
    """`leaving` stops being an owner of `organization`: if they were its paying account, its
    longest-standing other owner pays from now on (refused if that person is at the cap). Must
    run inside a transaction, before the membership changes."""
    if organization.billing_owner_id != leaving.pk:
        return
    owner_role = organization.memberships.model.OWNER
    successor = (
        organization.memberships.filter(role=owner_role)
        .exclude(user_id=leaving.pk)
        .select_related("user")
        .order_by("created_at", "id")
        .first()
    )
    if successor is None:
        return  # the last owner: the membership rules refuse this change themselves
    require_room(successor.user, who=successor.user.email)
    organization.billing_owner = successor.user
    organization.save(update_fields=["billing_owner"])
