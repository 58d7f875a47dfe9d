"""SCIM Groups of one organization's directory: create, replace, patch (members added and
removed, renamed), delete, list. A group's members get the role the organization maps its name
to (scim/roles.py); every person whose groups changed is given their role again at once."""

from django.db import IntegrityError, transaction

from audit.record import audit_record

from . import roles
from .errors import ScimError
from .filters import get_ci
from .lookup import by_uid, is_uuid, page_of
from .models import Directory, ScimGroup, ScimUser
from .patch import patched
from .resources import group_resource


def _parse(directory: Directory, body) -> tuple[str, str, list[ScimUser] | None]:
    if not isinstance(body, dict):
        raise ScimError(400, "The body must be a Group object", "invalidSyntax")
    name = get_ci(body, "displayName")
    if not isinstance(name, str) or not name.strip():
        raise ScimError(400, "displayName is required", "invalidValue")
    external_id = get_ci(body, "externalId") or ""
    members = get_ci(body, "members")
    if members is None:
        return name.strip(), str(external_id), None
    if not isinstance(members, list):
        raise ScimError(400, "members must be a list", "invalidValue")
    ids = [m.get("value") if isinstance(m, dict) else None for m in members]
    if not all(isinstance(i, str) and is_uuid(i) for i in ids):
        raise ScimError(400, "Each member needs the value of a User id", "invalidValue")
    found = list(directory.organization.scim_users.filter(uid__in=ids))
    if len(found) != len(set(ids)):
        raise ScimError(400, "A member is not a User of this organization", "invalidValue")
    return name.strip(), str(external_id), found


def _save(directory: Directory, group: ScimGroup, body, action: str) -> ScimGroup:
    name, external_id, members = _parse(directory, body)
    renamed = group.pk is not None and group.display_name != name
    try:
        with transaction.atomic():
            before = set(group.members.values_list("pk", flat=True)) if group.pk else set()
            group.display_name = name
            group.external_id = external_id
            group.save()
            if members is not None:
                group.members.set(members)
            after = set(group.members.values_list("pk", flat=True))
            # The mapping is by name: a rename can change everyone's role.
            touched = (before | after) if renamed else (before ^ after)
            for scim_user in ScimUser.objects.filter(pk__in=touched):
                roles.apply(directory, scim_user)
            audit_record(
                action=f"scim.group_{action}",
                organization_id=directory.organization_id,
                target_type="scim_group",
                target_id=str(group.uid),
                target_label=group.display_name,
                after={
                    "members_added": len(after - before),
                    "members_removed": len(before - after),
                },
            )
    except IntegrityError:
        raise ScimError(409, f"A group named {name} exists already", "uniqueness") from None
    return group


def group_create(*, directory: Directory, body) -> ScimGroup:
    return _save(directory, ScimGroup(organization=directory.organization), body, "create")


def group_replace(*, directory: Directory, group: ScimGroup, body) -> ScimGroup:
    return _save(directory, group, body, "replace")


def group_patch(*, directory: Directory, group: ScimGroup, body) -> ScimGroup:
    changed = patched(group_resource(group), body)
    if get_ci(changed, "members") is None:
        changed["members"] = []
    return _save(directory, group, changed, "patch")


def group_delete(*, directory: Directory, group: ScimGroup) -> None:
    with transaction.atomic():
        members = list(group.members.all())
        audit_record(
            action="scim.group_delete",
            organization_id=directory.organization_id,
            target_type="scim_group",
            target_id=str(group.uid),
            target_label=group.display_name,
            before={"members": len(members)},
        )
        group.delete()
        for scim_user in members:
            roles.apply(directory, scim_user)


def group_get(*, directory: Directory, uid: str) -> ScimGroup:
    return by_uid(directory.organization.scim_groups, kind="Group", uid=uid)


FAST = {"displayname": "display_name__iexact", "externalid": "external_id", "id": "uid"}


def groups_list(
    *, directory: Directory, filter_text: str | None, start: int, count: int, members: bool
) -> tuple[list[dict], int]:
    """(resources of the page, total matching): scim/lookup.py's page_of; without `members`,
    the page leaves them out (a filter still sees them)."""
    return page_of(
        directory.organization.scim_groups.prefetch_related("members").order_by("created_at", "pk"),
        filter_text=filter_text,
        start=start,
        count=count,
        fast=FAST,
        resource=group_resource,
        hidden=() if members else ("members",),
    )
