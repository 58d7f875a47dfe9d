"""Who an ID token's claims sign in as: the account linked to the provider's subject, just-in-time
membership with the default role, and the role the groups claim maps to, on every sign-in.

Linking is deliberately narrow (docs/sso.md, "Accounts"): a subject seen before signs in as the
account it was linked to; a new subject is linked to an existing account with its email only when
that account is already a member of the organization; otherwise a new account is made, unless the
email belongs to someone outside the organization (refused: an organization's provider must not
take over an account it was never given).
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from accounts.models import Membership, User
from accounts.policy import RANK
from audit import events

from .models import Connection, Identity
from .oidc import SsoError


@dataclass(frozen=True)
class SignIn:
    user: User
    membership: Membership
    created_user: bool
    created_membership: bool
    old_role: str | None


def email_domain(email: str) -> str:
    return email.rsplit("@", 1)[-1].strip().lower() if "@" in email else ""


def groups_of(claims: dict, claim: str) -> list[str]:
    value = claims.get(claim) or []
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in value if isinstance(v, str | int)] if isinstance(value, list) else []


def mapped_role(connection: Connection, groups: list[str]) -> str | None:
    """The highest role the person's groups map to; None when the mapping names none of them."""
    roles = [connection.role_mapping[g] for g in groups if g in connection.role_mapping]
    roles = [r for r in roles if r in RANK and r != Membership.OWNER]
    return max(roles, key=RANK.__getitem__) if roles else None


def _checked_email(connection: Connection, claims: dict) -> str:
    email = str(claims.get("email") or "").strip().lower()
    if not email:
        raise SsoError("The provider sent no email address; allow the email scope for this app.")
    if claims.get("email_verified") is False:
        raise SsoError("The provider says this email address is not verified.")
    if email_domain(email) not in connection.allowed_domains:
        raise SsoError(f"{email} is not in a domain allowed to sign in to this organization.")
    return email


def _account(connection: Connection, subject: str, email: str, name: str) -> tuple[User, bool]:
    identity = (
        Identity.objects.select_related("user")
        .filter(connection=connection, subject=subject)
        .first()
    )
    if identity is not None:
        return identity.user, False
    existing = User.objects.filter(email__iexact=email).first()
    if existing is None:
        return User.objects.create_user(email, None, name=name[:150]), True
    if Identity.objects.filter(connection=connection, user=existing).exists():
        # Another subject of this provider signs in to this account already: a provider that
        # gave the address to someone new must not hand them the old holder's account.
        raise SsoError(
            f"{email} is linked to another identity at this provider. Ask an admin to remove "
            "the old link (Django admin, SSO identities) if it is the same person."
        )
    if Membership.objects.filter(organization=connection.organization, user=existing).exists():
        return existing, False
    raise SsoError(
        f"An account with {email} exists and is not a member of {connection.organization.name}. "
        "Ask an admin to invite it; once accepted, single sign-on signs in to it."
    )


def sign_in(*, connection: Connection, claims: dict) -> SignIn:
    """The account, membership and role for verified ID token claims (sso/oidc.py)."""
    if not connection.enabled:
        raise SsoError("Single sign-on is turned off for this organization.")
    subject = str(claims["sub"])
    email = _checked_email(connection, claims)
    groups = groups_of(claims, connection.groups_claim)
    with transaction.atomic():
        user, created_user = _account(connection, subject, email, str(claims.get("name") or ""))
        if not user.is_active:
            raise SsoError("This account is deactivated.")
        identity, _ = Identity.objects.update_or_create(
            connection=connection,
            subject=subject,
            defaults={"user": user, "email": email, "groups": groups},
        )
        Identity.objects.filter(pk=identity.pk).update(last_sign_in_at=timezone.now())
        membership = (
            Membership.objects.select_for_update()
            .filter(organization=connection.organization, user=user)
            .first()
        )
        mapped = mapped_role(connection, groups)
        if membership is None:
            membership = Membership.objects.create(
                organization=connection.organization,
                user=user,
                role=mapped or connection.default_role,
            )
            events.sso_joined(membership, groups=groups)
            return SignIn(user, membership, created_user, True, None)
        old_role = membership.role
        # Owners are made and unmade by hand (the break-glass path); everyone else's role follows
        # the mapping on every sign-in: up or down, never beyond what their groups map to.
        if membership.role != Membership.OWNER and connection.role_mapping:
            role = mapped or connection.default_role
            if role != membership.role:
                membership.role = role
                membership.save(update_fields=["role"])
                events.role_changed(membership, old_role)
        return SignIn(user, membership, created_user, False, old_role)
