"""Service accounts: an organization's machine identities (docs/roles.md, "Service accounts").

A service account has an explicit role (member or admin) and keys that act as it; admins create
it, change its role, disable it (its keys are refused until it is enabled again) and delete it
(its keys are revoked). An admin may also move a person's key to a service account, so that the
key keeps working after that person leaves. Every function checks the policy itself.
"""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit import events as audit_events

from . import policy
from .models import ApiKey, Organization, ServiceAccount, User
from .policy import Action

ROLES = {role for role, _ in ServiceAccount.ROLES}


def _role(role: str) -> str:
    if role not in ROLES:
        raise ValidationError(
            f"A service account's role is one of {', '.join(sorted(ROLES))}, not {role!r}."
        )
    return role


def _name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise ValidationError("Give the service account a name of 1 to 100 characters.")
    return name


def service_account_create(
    *, actor: User, organization: Organization, name: str, role: str = "member"
) -> ServiceAccount:
    policy.require(user=actor, org=organization, action=Action.SERVICE_ACCOUNTS)
    try:
        with transaction.atomic():
            account = ServiceAccount.objects.create(
                organization=organization, name=_name(name), role=_role(role), created_by=actor
            )
    except IntegrityError:
        raise ValidationError(
            f"This organization already has a service account named {name!r}."
        ) from None
    audit_events.service_account_changed(account, "create", after={"role": account.role})
    return account


def service_account_update(
    *, actor: User, account: ServiceAccount, name: str | None = None, role: str | None = None
) -> ServiceAccount:
    """Rename it or change its role; its keys follow the new role on their next request."""
    policy.require(user=actor, org=account.organization, action=Action.SERVICE_ACCOUNTS)
    before = {"name": account.name, "role": account.role}
    if name is not None:
        account.name = _name(name)
    if role is not None:
        account.role = _role(role)
    try:
        with transaction.atomic():
            # servers/access_changes.py judges its keys again when the role changed.
            account.save(update_fields=["name", "role"])
    except IntegrityError:
        raise ValidationError(
            f"This organization already has a service account named {name!r}."
        ) from None
    after = {"name": account.name, "role": account.role}
    if after != before:
        audit_events.service_account_changed(account, "update", before=before, after=after)
    return account


def service_account_set_disabled(
    *, actor: User, account: ServiceAccount, disabled: bool
) -> ServiceAccount:
    policy.require(user=actor, org=account.organization, action=Action.SERVICE_ACCOUNTS)
    if disabled == (account.disabled_at is not None):
        return account
    account.disabled_at = timezone.now() if disabled else None
    account.save(update_fields=["disabled_at"])
    audit_events.service_account_changed(account, "disable" if disabled else "enable")
    return account


def service_account_delete(*, actor: User, account: ServiceAccount) -> int:
    """Revoke its keys, then delete it; returns how many keys were revoked."""
    policy.require(user=actor, org=account.organization, action=Action.SERVICE_ACCOUNTS)
    with transaction.atomic():
        revoked = 0
        for key in account.api_keys.filter(revoked_at=None):
            key.revoke()
            revoked += 1
        audit_events.service_account_changed(
            account, "delete", before={"role": account.role, "keys_revoked": revoked}
        )
        account.delete()
    return revoked


def service_account_key_issue(
    *, actor: User, account: ServiceAccount, name: str, servers=(), expires_at=None
) -> tuple[ApiKey, str]:
    """A new key acting as the service account; (key, raw), the raw key shown once."""
    policy.require(user=actor, org=account.organization, action=Action.SERVICE_ACCOUNTS)
    if account.disabled_at is not None:
        raise ValidationError("Enable the service account before giving it a new key.")
    return ApiKey.issue(
        account.organization,
        name,
        servers=servers,
        expires_at=expires_at,
        created_by=actor,
        service_account=account,
    )


def key_transfer(*, actor: User, key: ApiKey, account: ServiceAccount | None) -> ApiKey:
    """Make a key act as a service account (or, with None, as its creator again).

    Moving another person's key takes the right to manage anyone's keys as well; both
    organizations must be the key's."""
    organization = key.organization
    policy.require(user=actor, org=organization, action=Action.SERVICE_ACCOUNTS)
    policy.require(user=actor, org=organization, action=Action.KEY_MANAGE, obj=key)
    if account is not None and account.organization_id != key.organization_id:
        raise ValidationError("That service account belongs to another organization.")
    if account is None and key.created_by_id is None:
        raise ValidationError("This key has no creator to act as; move it to a service account.")
    before = key.service_account
    key.service_account = account
    key.save(update_fields=["service_account"])
    target = account or before
    if target is not None:
        audit_events.service_account_changed(
            target,
            "key_transfer",
            before={"key": key.name, "acts_as": before.name if before else key.principal_label},
            after={"key": key.name, "acts_as": account.name if account else key.principal_label},
        )
    return key
