"""Which role a provisioned person has: the highest role that the organization maps one of
their groups to (Directory.group_roles, by group name, case-insensitively), else the directory's
default role. Owners are never changed by SCIM (an identity provider must not demote the people
who run the organization in getmcp), and no mapping gives the owner role."""

from django.db import transaction

from accounts.models import Membership
from audit import events as audit_events

from .models import Directory, ScimUser

RANK = {"viewer": 0, "member": 1, "admin": 2}


def role_for(directory: Directory, scim_user: ScimUser) -> str:
    mapping = {name.lower(): role for name, role in (directory.group_roles or {}).items()}
    mapped = [
        mapping[name.lower()]
        for name in scim_user.groups.values_list("display_name", flat=True)
        if name.lower() in mapping
    ]
    return max(mapped, key=RANK.__getitem__) if mapped else directory.default_role


def apply(directory: Directory, scim_user: ScimUser) -> Membership | None:
    """Make the person's membership match: present with their role while active (created if
    missing). Deactivation is accounts.deprovision's, not this."""
    if not scim_user.active:
        return None
    role = role_for(directory, scim_user)
    with transaction.atomic():
        membership, created = Membership.objects.select_for_update().get_or_create(
            organization_id=directory.organization_id,
            user_id=scim_user.user_id,
            defaults={"role": role},
        )
        if not created and membership.role not in (role, Membership.OWNER):
            old = membership.role
            membership.role = role
            # servers/access_changes.py narrows their keys and grants at once.
            membership.save(update_fields=["role"])
            audit_events.role_changed(membership, old)
    return membership


def apply_all(directory: Directory) -> None:
    for scim_user in directory.organization.scim_users.filter(active=True):
        apply(directory, scim_user)
