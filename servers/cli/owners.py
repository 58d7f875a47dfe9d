"""Resolve `--owner EMAIL [--org SLUG]` to a user and one of their organizations."""

from django.core.management.base import CommandError

from accounts import policy
from accounts.billing import OrganizationLimitReached
from accounts.models import User


def resolve_owner(email: str, org_slug: str | None = None):
    """(user, organization). An organization the user is not a member of reads as "not found",
    exactly like one that does not exist."""
    user = User.objects.filter(email__iexact=email.strip()).first()
    if user is None:
        raise CommandError(f"--owner: no user with email {email!r}")
    if org_slug:
        org = user.organizations().filter(slug=org_slug).first()
        if org is None:
            raise CommandError(f"--org: {email} has no organization {org_slug!r}")
    else:
        # The explicit personal organization (never inferred from memberships).
        try:
            org = user.personal_organization()
        except OrganizationLimitReached as exc:
            raise CommandError(f"--owner: {exc.messages[0]}") from None
    return user, org


def authorize(user, org, action: policy.Action, obj=None) -> None:
    """The role check of a command (accounts.policy), as a CommandError."""
    try:
        policy.require(user=user, org=org, action=action, obj=obj)
    except policy.NotFound:
        raise CommandError(f"--owner: {user.email} has no organization {org.slug!r}") from None
    except policy.PermissionDenied as exc:
        raise CommandError(f"--owner: {exc}") from None
