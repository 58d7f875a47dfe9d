"""Resolve `--owner EMAIL [--org SLUG]` to a user and one of their organizations."""

from django.core.management.base import CommandError

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
        org = user.personal_organization()
        if org is None:
            raise CommandError(f"--owner: {email} belongs to no organization; pass --org")
    return user, org
