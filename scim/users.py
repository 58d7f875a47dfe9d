"""SCIM Users of one organization's directory: create, replace, patch, delete, list.

A SCIM User is a person's place in the organization as its identity provider sees it. Its
`userName` (or its primary email) names the getmcp account: an existing account with that
address is linked only when it is a member of the organization already (invited and accepted);
any other existing account is invited instead and the create answers 409 (`_require_consent`).
With no account, one is created without a password (the person signs in through the
organization's SSO, or sets a password with "forgot password"). The account is
bound once, at creation: a later change of userName renames the SCIM record only.

`active: false` (PUT or PATCH, Okta's and Entra ID's shapes) and DELETE go through
accounts.deprovision, which ends everything of the person in this organization (keys, grants,
sessions, streams, sockets, connected accounts); `active: true` brings the membership back with
the role the mapping gives (accounts.deprovision suspended the keys, so they work again; revoked
grants stay revoked). DELETE also revokes their personal keys and forgets the SCIM record.
SCIM never touches the account itself (its password, User.is_active) nor other organizations.
"""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from accounts.deprovision import member_deprovision
from accounts.models import Invitation, User
from accounts.services import invitation_from_directory
from audit.record import audit_record

from . import roles
from .errors import ScimError
from .filters import get_ci
from .lookup import by_uid, page_of
from .models import Directory, ScimUser
from .patch import patched
from .resources import user_resource

# What the provider sends that we keep and return as it is (the rest is computed or ignored).
KEPT = ("name", "displayName", "nickName", "title", "emails", "phoneNumbers", "locale", "userType")
EXTENSION = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"


def _active(value) -> bool:
    if value is None:
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ScimError(400, "active must be a boolean", "invalidValue")


def _email(body: dict, user_name: str) -> str:
    if "@" in user_name:
        return user_name.strip().lower()
    emails = get_ci(body, "emails") or []
    ordered = sorted(
        (e for e in emails if isinstance(e, dict) and isinstance(e.get("value"), str)),
        key=lambda e: (not e.get("primary"), e.get("type") != "work"),
    )
    if not ordered:
        raise ScimError(400, "userName or emails must give an email address", "invalidValue")
    return ordered[0]["value"].strip().lower()


def _parse(body) -> tuple[str, str, bool, dict]:
    if not isinstance(body, dict):
        raise ScimError(400, "The body must be a User object", "invalidSyntax")
    user_name = get_ci(body, "userName")
    if not isinstance(user_name, str) or not user_name.strip():
        raise ScimError(400, "userName is required", "invalidValue")
    external_id = get_ci(body, "externalId") or ""
    if not isinstance(external_id, str):
        raise ScimError(400, "externalId must be a string", "invalidValue")
    attributes = {name: get_ci(body, name) for name in KEPT if get_ci(body, name) is not None}
    extension = get_ci(body, EXTENSION)
    if isinstance(extension, dict):
        attributes[EXTENSION] = extension
        attributes["schemas_extra"] = [EXTENSION]
    return user_name.strip(), external_id, _active(get_ci(body, "active")), attributes


def _display_name(attributes: dict) -> str:
    name = attributes.get("name") or {}
    if isinstance(name, dict):
        full = name.get("formatted") or " ".join(
            p for p in (name.get("givenName"), name.get("familyName")) if isinstance(p, str)
        )
        if full:
            return str(full)[:150]
    return str(attributes.get("displayName") or "")[:150]


def _account(email: str, attributes: dict) -> User:
    found = User.objects.filter(email__iexact=email).first()
    if found is not None:
        return found  # a member already (_require_consent checked it first)
    # No password: they sign in through SSO or set one with "forgot password".
    return User.objects.create_user(email, None, name=_display_name(attributes))


def _require_consent(directory: Directory, email: str) -> None:
    """An existing account joins only when it is a member already (it accepted an invitation):
    the organization's provider never pulls in an account the organization was not given, as
    for SSO (docs/sso.md). Otherwise the person is invited (once; a retried create finds the
    open invitation) and the create answers 409 saying so; after they accept, the provider's
    next create links the account. Outside the create's transaction: the invitation stays."""
    organization = directory.organization
    found = User.objects.filter(email__iexact=email).first()
    if found is None or organization.memberships.filter(user=found).exists():
        return
    try:
        invitation = invitation_from_directory(
            organization=organization, email=email, role=directory.default_role
        )
    except ValidationError:
        raise ScimError(
            409,
            f"{email} has a getmcp account outside this organization; it joins only by accepting "
            "an invitation, and too many were sent to this address recently. Try again later.",
            "uniqueness",
        ) from None
    if invitation.state == Invitation.DECLINED:
        raise ScimError(
            409,
            f"{email} has a getmcp account outside this organization and declined the "
            "invitation to join it; an admin may invite them again from the members page.",
            "uniqueness",
        )
    raise ScimError(
        409,
        f"{email} has a getmcp account outside this organization; it joins only with its owner's "
        f"consent. An invitation was sent (valid until {invitation.expires_at:%Y-%m-%d}); once "
        "it is accepted, provision this user again.",
        "uniqueness",
    )


def _audit(directory: Directory, scim_user: ScimUser, action: str, **after) -> None:
    audit_record(
        action=f"scim.user_{action}",
        organization_id=directory.organization_id,
        target_type="scim_user",
        target_id=str(scim_user.uid),
        target_label=scim_user.user_name,
        after={"active": scim_user.active, **after} if action != "delete" else None,
        before={"active": scim_user.active} if action == "delete" else None,
    )


def _follow_activity(directory: Directory, scim_user: ScimUser, was_active: bool | None) -> None:
    """Membership follows `active`: deprovision on deactivation, role otherwise."""
    if scim_user.active:
        roles.apply(directory, scim_user)
    elif was_active is not False:
        try:
            member_deprovision(
                organization=directory.organization, user=scim_user.user, reason="scim.deactivate"
            )
        except ValueError as exc:  # the organization's last owner
            raise ScimError(409, str(exc), "mutability") from None


def user_create(*, directory: Directory, body) -> ScimUser:
    user_name, external_id, active, attributes = _parse(body)
    organization = directory.organization
    if organization.scim_users.filter(user_name__iexact=user_name).exists():
        raise ScimError(409, f"A user named {user_name} exists already", "uniqueness")
    email = _email(body, user_name)
    _require_consent(directory, email)
    try:
        with transaction.atomic():
            account = _account(email, attributes)
            scim_user = ScimUser.objects.create(
                organization=organization,
                user=account,
                user_name=user_name,
                external_id=external_id,
                active=active,
                attributes=attributes,
            )
            _follow_activity(directory, scim_user, None if active else True)
            _audit(directory, scim_user, "create")
    except IntegrityError:
        raise ScimError(
            409, "This person is provisioned already under another userName", "uniqueness"
        ) from None
    return scim_user


def user_replace(*, directory: Directory, scim_user: ScimUser, body) -> ScimUser:
    user_name, external_id, active, attributes = _parse(body)
    was_active = scim_user.active
    try:
        with transaction.atomic():
            scim_user.user_name = user_name
            scim_user.external_id = external_id
            scim_user.active = active
            scim_user.attributes = attributes
            scim_user.save()
            _follow_activity(directory, scim_user, was_active)
            if was_active != active:
                _audit(directory, scim_user, "activate" if active else "deactivate")
            else:
                _audit(directory, scim_user, "replace")
    except IntegrityError:
        raise ScimError(409, f"A user named {user_name} exists already", "uniqueness") from None
    return scim_user


def user_patch(*, directory: Directory, scim_user: ScimUser, body) -> ScimUser:
    return user_replace(
        directory=directory, scim_user=scim_user, body=patched(user_resource(scim_user), body)
    )


def user_delete(*, directory: Directory, scim_user: ScimUser) -> None:
    with transaction.atomic():
        try:
            # A person deactivated earlier has no membership left; their suspended keys are
            # revoked for good now.
            member_deprovision(
                organization=directory.organization,
                user=scim_user.user,
                reason="scim.delete",
                revoke_keys=True,
            )
        except ValueError as exc:  # the organization's last owner
            raise ScimError(409, str(exc), "mutability") from None
        _audit(directory, scim_user, "delete")
        scim_user.delete()


def user_get(*, directory: Directory, uid: str) -> ScimUser:
    return by_uid(_users(directory), kind="User", uid=uid)


def _users(directory: Directory) -> QuerySet[ScimUser]:
    return directory.organization.scim_users.select_related("user").order_by("created_at", "pk")


FAST = {"username": "user_name__iexact", "externalid": "external_id", "id": "uid"}


def users_list(
    *, directory: Directory, filter_text: str | None, start: int, count: int
) -> tuple[list[dict], int]:
    """(resources of the page, total matching): scim/lookup.py's page_of."""
    return page_of(
        _users(directory).prefetch_related("groups"),
        filter_text=filter_text,
        start=start,
        count=count,
        fast=FAST,
        resource=user_resource,
    )
