"""An organization's SCIM directory: its bearer token (created and rotated by admins, shown
once, stored as a digest) and its role settings. Every function that changes it checks the
policy itself (Action.SCIM_MANAGE)."""

import secrets

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts import policy
from accounts.models import Organization, User, digest_key
from accounts.policy import Action
from audit.record import audit_record

from .models import ROLES, Directory

TOKEN_PREFIX = "gscim_"
ROLE_NAMES = {role for role, _ in ROLES}


def directory_of(organization: Organization) -> Directory:
    directory, _ = Directory.objects.get_or_create(organization=organization)
    return directory


def _audit(directory: Directory, action: str, *, before=None, after=None) -> None:
    audit_record(
        action=f"scim.{action}",
        organization_id=directory.organization_id,
        target_type="scim_directory",
        target_id=str(directory.pk),
        target_label="SCIM directory",
        before=before,
        after=after,
    )


def token_rotate(*, actor: User, organization: Organization) -> str:
    """A new token (the old one stops working at once); returns the raw token, shown once."""
    policy.require(user=actor, org=organization, action=Action.SCIM_MANAGE)
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        directory = directory_of(organization)
        had = bool(directory.token_digest)
        directory.token_digest = digest_key(raw)
        directory.token_prefix = raw[: len(TOKEN_PREFIX) + 6]
        directory.token_created_at = timezone.now()
        directory.save(update_fields=["token_digest", "token_prefix", "token_created_at"])
        _audit(directory, "token_rotate" if had else "token_create")
    return raw


def token_revoke(*, actor: User, organization: Organization) -> None:
    policy.require(user=actor, org=organization, action=Action.SCIM_MANAGE)
    with transaction.atomic():
        directory = directory_of(organization)
        if directory.token_digest:
            directory.token_digest = None
            directory.token_prefix = ""
            directory.save(update_fields=["token_digest", "token_prefix"])
            _audit(directory, "token_revoke")


def _valid_mapping(group_roles) -> bool:
    return isinstance(group_roles, dict) and all(
        isinstance(k, str) and k.strip() and v in ROLE_NAMES for k, v in group_roles.items()
    )


def settings_update(
    *,
    actor: User,
    organization: Organization,
    default_role: str | None = None,
    group_roles: dict | None = None,
) -> Directory:
    """Change the default role or the group mapping; every provisioned person's role follows."""
    from . import roles

    policy.require(user=actor, org=organization, action=Action.SCIM_MANAGE)
    if default_role is not None and default_role not in ROLE_NAMES:
        raise ValidationError({"default_role": f"One of {', '.join(sorted(ROLE_NAMES))}."})
    if group_roles is not None and not _valid_mapping(group_roles):
        raise ValidationError(
            {"group_roles": "Map group names to one of " + ", ".join(sorted(ROLE_NAMES))}
        )
    with transaction.atomic():
        directory = directory_of(organization)
        before = {"default_role": directory.default_role, "group_roles": directory.group_roles}
        if default_role is not None:
            directory.default_role = default_role
        if group_roles is not None:
            directory.group_roles = {k.strip(): v for k, v in group_roles.items()}
        directory.save(update_fields=["default_role", "group_roles"])
        after = {"default_role": directory.default_role, "group_roles": directory.group_roles}
        if after != before:
            _audit(directory, "settings", before=before, after=after)
            roles.apply_all(directory)
    return directory


def authenticate(authorization: str | None) -> Directory | None:
    """The directory a `Bearer gscim_…` header names, or None."""
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token.startswith(TOKEN_PREFIX):
        return None
    return (
        Directory.objects.select_related("organization")
        .filter(token_digest=digest_key(token))
        .first()
    )
