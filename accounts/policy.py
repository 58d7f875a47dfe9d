"""The one place that decides who may do what in an organization (docs/roles.md is the table).

Every surface asks here: dashboard views (dashboard.views.base.authorize), the API
(api.base.PolicyPermission and the viewsets' perform_* hooks) and the management commands.

    can(user=..., org=..., action=Action.SECRET_WRITE)          -> bool
    require(user=..., org=..., action=Action.KEY_MANAGE, obj=key) -> None or raises

`require` raises `NotFound` (an Http404) when the user is not a member of the organization, so
an outsider cannot tell another organization's objects from missing ones, and `PermissionDenied`
(Django's, so both the dashboard and the API answer 403) when a member's role is too low.
"""

from enum import StrEnum

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404

from .models import Membership

VIEWER, MEMBER, ADMIN, OWNER = (
    Membership.VIEWER,
    Membership.MEMBER,
    Membership.ADMIN,
    Membership.OWNER,
)
RANK = {VIEWER: 0, MEMBER: 1, ADMIN: 2, OWNER: 3}


class Action(StrEnum):
    VIEW = "view"  # the organization and everything in it (secret values never show)
    ORG_SETTINGS = "org.settings"  # rename the organization
    ORG_QUOTAS = "org.quotas"  # call-log retention and other billing-like limits
    MEMBERS_MANAGE = "members.manage"  # invite, revoke invitations, change roles, remove
    OWNERS_MANAGE = "owners.manage"  # invite owners, grant or take the owner role
    KEY_CREATE = "key.create"  # mint MCP API keys (the playground's too)
    KEY_MANAGE = "key.manage"  # rename, rescope, revoke a key (obj: the key)
    SECRET_WRITE = "secret.write"  # set, replace, delete secrets
    # approve a tool that reads secrets: writing one is reading them (servers/secret_reach.py)
    SECRET_REACH = "secret.reach"
    SERVER_CREATE = "server.create"  # new servers, imports of whole servers
    SERVER_EDIT = "server.edit"  # draft tools/resources/prompts, API imports, test runs
    SERVER_PUBLISH = "server.publish"  # publish the draft, roll back
    SERVER_SETTINGS = "server.settings"  # auth mode, origins, limits, slug, replace-import
    SERVER_STATUS = "server.status"  # pause and resume
    SERVER_DELETE = "server.delete"
    AUDIT_VIEW = "audit.view"  # read the audit log (who changed what, from where)
    SERVICE_ACCOUNTS = "service_accounts.manage"  # machine identities, their keys, transfers
    CONNECTIONS_MANAGE = "connections.manage"  # OAuth providers; revoke members' connections
    SCIM_MANAGE = "scim.manage"  # the SCIM token, default role and group-to-role mapping
    # enterprise identity providers trusted for ID-JAG (oauth/trust.py)
    TRUSTED_ISSUERS = "trusted_issuers.manage"
    SSO_MANAGE = "sso.manage"  # single sign-on: the provider, domains, roles, "SSO required"


# The least role allowed each action.
LEAST_ROLE = {
    Action.VIEW: VIEWER,
    Action.ORG_SETTINGS: ADMIN,
    Action.ORG_QUOTAS: OWNER,
    Action.MEMBERS_MANAGE: ADMIN,
    Action.OWNERS_MANAGE: OWNER,
    Action.KEY_CREATE: MEMBER,
    Action.KEY_MANAGE: ADMIN,  # members: their own keys only, see OWN_OBJECTS
    Action.SECRET_WRITE: ADMIN,
    Action.SECRET_REACH: ADMIN,
    Action.SERVER_CREATE: MEMBER,
    Action.SERVER_EDIT: MEMBER,
    Action.SERVER_PUBLISH: MEMBER,
    Action.SERVER_SETTINGS: ADMIN,
    Action.SERVER_STATUS: ADMIN,
    Action.SERVER_DELETE: ADMIN,
    Action.AUDIT_VIEW: ADMIN,
    Action.SERVICE_ACCOUNTS: ADMIN,
    Action.CONNECTIONS_MANAGE: ADMIN,
    Action.SCIM_MANAGE: ADMIN,
    Action.TRUSTED_ISSUERS: ADMIN,
    Action.SSO_MANAGE: ADMIN,
}

# Actions a lower role may still take on objects it created: (least role, attribute naming the
# creator).
OWN_OBJECTS = {Action.KEY_MANAGE: (MEMBER, "created_by_id")}


class NotFound(Http404):
    """Not a member: the organization and its objects read as nonexistent."""


class PermissionDenied(DjangoPermissionDenied):
    """A member whose role does not allow the action."""


def membership_of(user, org) -> Membership | None:
    if user is None or not user.is_authenticated or org is None:
        return None
    return Membership.objects.filter(user=user, organization=org).first()


def role_allows(role: str | None, action: Action, *, user=None, obj=None) -> bool:
    """The table itself, for callers that already hold the membership's role."""
    if role not in RANK:
        return False
    if RANK[role] >= RANK[LEAST_ROLE[Action(action)]]:
        return True
    own = OWN_OBJECTS.get(action)
    if own and obj is not None and user is not None and RANK[role] >= RANK[own[0]]:
        return getattr(obj, own[1], None) == user.pk
    return False


def can(*, user, org, action: Action, obj=None, membership: Membership | None = None) -> bool:
    membership = membership or membership_of(user, org)
    if membership is None:
        return False
    return role_allows(membership.role, action, user=user, obj=obj)


def require(
    *, user, org, action: Action, obj=None, membership: Membership | None = None
) -> Membership:
    """The membership, when the action is allowed; raises NotFound or PermissionDenied."""
    membership = membership or membership_of(user, org)
    if membership is None:
        raise NotFound("No such organization.")
    if not role_allows(membership.role, action, user=user, obj=obj):
        raise PermissionDenied(denial(membership.role, action))
    return membership


def denial(role: str, action: Action) -> str:
    least = LEAST_ROLE[Action(action)]
    own = OWN_OBJECTS.get(action)
    extra = " (members: their own only)" if own else ""
    return (
        f"Your role ({role}) does not allow {DESCRIPTIONS[action]}; "
        f"it takes {least} or above{extra}."
    )


def allowed(role: str | None, *, user=None) -> dict[str, bool]:
    """{"secret_write": True, ...}: for templates, to hide what the role cannot do."""
    return {a.name.lower(): role_allows(role, a) for a in Action}


def grantable_roles(role: str | None) -> list[tuple[str, str]]:
    """The roles someone of `role` may give (invite with, or change to)."""
    if not role_allows(role, Action.MEMBERS_MANAGE):
        return []
    if role_allows(role, Action.OWNERS_MANAGE):
        return list(Membership.ROLES)
    return [r for r in Membership.ROLES if r[0] != OWNER]


DESCRIPTIONS = {
    Action.VIEW: "seeing this organization",
    Action.ORG_SETTINGS: "changing the organization's settings",
    Action.ORG_QUOTAS: "changing the organization's quotas and retention",
    Action.MEMBERS_MANAGE: "managing members and invitations",
    Action.OWNERS_MANAGE: "granting or removing the owner role",
    Action.KEY_CREATE: "creating API keys",
    Action.KEY_MANAGE: "changing or revoking this API key",
    Action.SECRET_WRITE: "setting or deleting secrets",
    Action.SECRET_REACH: "approving a tool that reads secrets",
    Action.SERVER_CREATE: "creating servers",
    Action.SERVER_EDIT: "editing servers",
    Action.SERVER_PUBLISH: "publishing servers",
    Action.SERVER_SETTINGS: "changing a server's settings",
    Action.SERVER_STATUS: "pausing or resuming servers",
    Action.SERVER_DELETE: "deleting servers",
    Action.AUDIT_VIEW: "reading the audit log",
    Action.SERVICE_ACCOUNTS: "managing service accounts and moving keys to them",
    Action.CONNECTIONS_MANAGE: "configuring OAuth providers and revoking members' connections",
    Action.SCIM_MANAGE: "managing SCIM provisioning",
    Action.TRUSTED_ISSUERS: "managing the enterprise identity providers this organization trusts",
    Action.SSO_MANAGE: "configuring single sign-on",
}
