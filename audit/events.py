"""The audit rows services write, one function per event family, so each service adds one
line. (Model changes of servers, parts, keys, tokens and secrets are recorded by
audit/signals.py.)

Nearly every event is about one object of an organization: its `_Target` below says the
target_type and how such an object is labelled, and writes the row with the organization and id
read from the object, so each function only says its action and what is worth keeping."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .context import Actor, current_request, request_address
from .record import audit_record


@dataclass(frozen=True)
class _Target:
    type: str
    label: Callable[[Any], str]

    def record(self, obj, action: str, **fields) -> None:
        audit_record(
            action=action,
            organization_id=obj.organization_id,
            target_type=self.type,
            target_id=obj.pk,
            target_label=self.label(obj),
            **fields,
        )


def _address():
    return request_address(current_request())


def _grant_label(grant) -> str:
    return f"{grant.client.client_name or grant.client.client_id} ({grant.principal_label})"[:300]


def _connection_label(connection) -> str:
    who = connection.user.email if connection.user_id else "shared account"
    return f"{connection.provider.name} ({who})"[:300]


_INVITATION = _Target("invitation", lambda invitation: invitation.email)
_MEMBERSHIP = _Target("membership", lambda membership: membership.user.email)
_SERVICE_ACCOUNT = _Target("service_account", lambda account: account.name)
_TRUSTED_ISSUER = _Target("trusted_issuer", lambda trust: f"{trust.name} ({trust.issuer})"[:300])
_SERVER = _Target("server", lambda server: server.slug)
_GRANT = _Target("oauth_grant", _grant_label)
_SSO_CONNECTION = _Target("sso_connection", lambda connection: connection.issuer)
_CONNECTION = _Target("connection", _connection_label)
_PROVIDER = _Target("connection_provider", lambda p: f"{p.name} ({p.key})"[:300])


# -- members ---------------------------------------------------------------------------------


def invitation_sent(invitation) -> None:
    _INVITATION.record(
        invitation,
        "member.invite",
        after={"email": invitation.email, "role": invitation.role},
    )


def invitation_answered(invitation, state: str, actor_user) -> None:
    _INVITATION.record(
        invitation,
        {"accepted": "member.accept", "declined": "member.decline"}.get(
            state, "member.invite_revoke"
        ),
        before={"state": "pending"},
        after={"state": state, "role": invitation.role},
    )


def role_changed(membership, old_role: str) -> None:
    _MEMBERSHIP.record(
        membership,
        "member.role_change",
        before={"role": old_role},
        after={"role": membership.role},
    )


def member_removed(membership, *, left: bool) -> None:
    _MEMBERSHIP.record(
        membership,
        "member.leave" if left else "member.remove",
        before={"role": membership.role, "user": membership.user.email},
    )


def service_account_changed(account, action: str, *, before=None, after=None) -> None:
    """service_account.create / .update / .disable / .enable / .delete / .key_transfer"""
    _SERVICE_ACCOUNT.record(account, f"service_account.{action}", before=before, after=after)


def trusted_issuer_changed(trust, action: str, *, before=None, after=None) -> None:
    """trusted_issuer.create / .update / .delete (enterprise identity providers, ID-JAG)"""
    _TRUSTED_ISSUER.record(trust, f"trusted_issuer.{action}", before=before, after=after)


def retention_set(organization, days) -> None:
    from activity.models import RetentionOverride

    # The organization is its own target (its id is the organization id), hence no _Target.
    old = RetentionOverride.objects.filter(organization=organization).values_list("days", flat=True)
    audit_record(
        action="organization.settings",
        organization_id=organization.pk,
        target_type="organization",
        target_id=organization.pk,
        target_label=organization.slug,
        before={"callLogRetentionDays": old.first()},
        after={"callLogRetentionDays": days},
    )


# -- publishing ------------------------------------------------------------------------------


def published(version, *, rollback_from: str | None = None) -> None:
    _SERVER.record(
        version.server,
        "server.rollback" if rollback_from else "server.publish",
        after={"version": version.version},
        detail={"restored": rollback_from} if rollback_from else None,
    )


# -- OAuth -----------------------------------------------------------------------------------


def _grant_actor(grant) -> Actor:
    client = grant.client
    label = f"{client.client_name or client.client_id} for {grant.principal_label}"
    return Actor("grant", str(grant.pk), label[:300], _address())


def grant_created(grant) -> None:
    _GRANT.record(
        grant,
        "oauth.grant",
        after={"server": grant.server.slug, "scope": grant.scope, "resource": grant.resource},
    )


def grant_revoked(grant, reason: str) -> None:
    _GRANT.record(grant, "oauth.grant_revoke", detail={"reason": reason})


def tokens_issued(grant, *, refresh: bool) -> None:
    _GRANT.record(
        grant, "oauth.token_issue", detail={"refreshToken": refresh}, actor=_grant_actor(grant)
    )


def token_revoked(grant) -> None:
    _GRANT.record(grant, "oauth.token_revoke", actor=_grant_actor(grant))


# -- single sign-on (sso/) -------------------------------------------------------------------


def _member_actor(membership) -> Actor:
    # The person themselves acted (through the organization's provider), not whoever is signed
    # in on the request.
    return Actor("user", str(membership.user_id), membership.user.email, _address())


def sso_config_changed(connection, action: str, *, before=None, after=None) -> None:
    """sso.config_create / .config_update / .config_delete (the secret itself never: only
    whether one is set, under a name the redaction leaves readable)."""
    _SSO_CONNECTION.record(connection, f"sso.{action}", before=before, after=after)


def sso_joined(membership, *, groups) -> None:
    """Just-in-time membership: someone the organization's provider vouches for joined."""
    _MEMBERSHIP.record(
        membership,
        "sso.join",
        after={"role": membership.role},
        detail={"groups": list(groups)},
        actor=_member_actor(membership),
    )


def sso_signed_in(membership, *, subject: str, groups) -> None:
    _MEMBERSHIP.record(
        membership,
        "sso.sign_in",
        detail={"subject": subject, "groups": list(groups), "role": membership.role},
        actor=_member_actor(membership),
    )


def sso_refused(organization_id: int, *, reason: str, email: str = "") -> None:
    """A sign-in through the organization's provider that did not sign anyone in."""
    audit_record(
        action="sso.sign_in_refused",
        organization_id=organization_id,
        target_type="sso_connection",
        target_label=email,
        detail={"reason": reason},
    )


def sso_break_glass(membership) -> None:
    """An owner signed in with a password although the organization requires single sign-on."""
    _MEMBERSHIP.record(membership, "sso.break_glass", actor=_member_actor(membership))


# -- connected accounts ----------------------------------------------------------------------


def connection_connected(connection, *, user_id) -> None:
    _CONNECTION.record(
        connection,
        "connection.connect",
        after={"provider": connection.provider.key, "scopes": connection.scopes},
    )


def connection_refresh_failed(connection, *, reason: str) -> None:
    # Written by the call that found the grant gone, so its actor is the system, not a person.
    _CONNECTION.record(
        connection,
        "connection.refresh_fail",
        detail={"reason": reason[:300]},
        actor=Actor("system", "", "token refresh", None),
    )


def connection_revoked(connection, *, reason: str) -> None:
    _CONNECTION.record(
        connection,
        "connection.revoke",
        before={"provider": connection.provider.key, "scopes": connection.scopes},
        detail={"reason": reason},
    )


def provider_changed(provider, action: str, *, before=None, after=None) -> None:
    """connection_provider.create / .update / .delete"""
    _PROVIDER.record(provider, f"connection_provider.{action}", before=before, after=after)
