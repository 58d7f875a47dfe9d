""" "SSO required": password sign-in refuses the members of an organization that requires single
sign-on. Its owners keep their password (the break-glass path, docs/sso.md): each such sign-in is
an audit row of that organization, so it never goes unnoticed."""

from accounts.models import Membership
from audit import events


def password_refusal(user) -> str | None:
    """Why `user` may not sign in with a password, or None when they may (recording the
    break-glass sign-ins of owners)."""
    memberships = list(
        Membership.objects.filter(
            user=user,
            organization__sso_connection__required=True,
            organization__sso_connection__enabled=True,
        ).select_related("organization", "user")
    )
    blocked = [m for m in memberships if m.role != Membership.OWNER]
    if blocked:
        names = ", ".join(sorted(m.organization.name for m in blocked))
        return f"{names} requires single sign-on: use “Sign in with SSO” with your work email."
    for membership in memberships:
        events.sso_break_glass(membership)
    return None
