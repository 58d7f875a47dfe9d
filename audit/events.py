"""The audit rows services write, one function per event family, so each service adds one
line. (Model changes of servers, parts, keys, tokens and secrets are recorded by
audit/signals.py.)"""

from .context import Actor, current_request, request_address
from .record import audit_record


def _member_label(membership) -> str:
    return membership.user.email


# -- members ---------------------------------------------------------------------------------


def invitation_sent(invitation) -> None:
    audit_record(
        action="member.invite",
        organization_id=invitation.organization_id,
        target_type="invitation",
        target_id=invitation.pk,
        target_label=invitation.email,
        after={"email": invitation.email, "role": invitation.role},
    )


def invitation_answered(invitation, state: str, actor_user) -> None:
    audit_record(
        action={"accepted": "member.accept", "declined": "member.decline"}.get(
            state, "member.invite_revoke"
        ),
        organization_id=invitation.organization_id,
        target_type="invitation",
        target_id=invitation.pk,
        target_label=invitation.email,
        before={"state": "pending"},
        after={"state": state, "role": invitation.role},
    )


def role_changed(membership, old_role: str) -> None:
    audit_record(
        action="member.role_change",
        organization_id=membership.organization_id,
        target_type="membership",
        target_id=membership.pk,
        target_label=_member_label(membership),
        before={"role": old_role},
        after={"role": membership.role},
    )


def member_removed(membership, *, left: bool) -> None:
    audit_record(
        action="member.leave" if left else "member.remove",
        organization_id=membership.organization_id,
        target_type="membership",
        target_id=membership.pk,
        target_label=_member_label(membership),
        before={"role": membership.role, "user": membership.user.email},
    )


def service_account_changed(account, action: str, *, before=None, after=None) -> None:
    """service_account.create / .update / .disable / .enable / .delete / .key_transfer"""
    audit_record(
        action=f"service_account.{action}",
        organization_id=account.organization_id,
        target_type="service_account",
        target_id=account.pk,
        target_label=account.name,
        before=before,
        after=after,
    )


def trusted_issuer_changed(trust, action: str, *, before=None, after=None) -> None:
    """trusted_issuer.create / .update / .delete (enterprise identity providers, ID-JAG)"""
    audit_record(
        action=f"trusted_issuer.{action}",
        organization_id=trust.organization_id,
        target_type="trusted_issuer",
        target_id=trust.pk,
        target_label=f"{trust.name} ({trust.issuer})"[:300],
        before=before,
        after=after,
    )


def retention_set(organization, days) -> None:
    from activity.models import RetentionOverride

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
    server = version.server
    audit_record(
        action="server.rollback" if rollback_from else "server.publish",
        organization_id=server.organization_id,
        target_type="server",
        target_id=server.pk,
        target_label=server.slug,
        after={"version": version.version},
        detail={"restored": rollback_from} if rollback_from else None,
    )


# -- OAuth -----------------------------------------------------------------------------------


def _grant_actor(grant) -> Actor:
    client = grant.client
    label = f"{client.client_name or client.client_id} for {grant.principal_label}"
    return Actor("grant", str(grant.pk), label[:300], request_address(current_request()))


def _grant_label(grant) -> str:
    return f"{grant.client.client_name or grant.client.client_id} ({grant.principal_label})"[:300]


def grant_created(grant) -> None:
    audit_record(
        action="oauth.grant",
        organization_id=grant.organization_id,
        target_type="oauth_grant",
        target_id=grant.pk,
        target_label=_grant_label(grant),
        after={"server": grant.server.slug, "scope": grant.scope, "resource": grant.resource},
    )


def grant_revoked(grant, reason: str) -> None:
    audit_record(
        action="oauth.grant_revoke",
        organization_id=grant.organization_id,
        target_type="oauth_grant",
        target_id=grant.pk,
        target_label=_grant_label(grant),
        detail={"reason": reason},
    )


def tokens_issued(grant, *, refresh: bool) -> None:
    audit_record(
        action="oauth.token_issue",
        organization_id=grant.organization_id,
        target_type="oauth_grant",
        target_id=grant.pk,
        target_label=_grant_label(grant),
        detail={"refreshToken": refresh},
        actor=_grant_actor(grant),
    )


def token_revoked(grant) -> None:
    audit_record(
        action="oauth.token_revoke",
        organization_id=grant.organization_id,
        target_type="oauth_grant",
        target_id=grant.pk,
        target_label=_grant_label(grant),
        actor=_grant_actor(grant),
    )


# -- single sign-on (sso/) -------------------------------------------------------------------


def sso_config_changed(connection, action: str, *, before=None, after=None) -> None:
    """sso.config_create / .config_update / .config_delete (the secret itself never: only
    whether one is set, under a name the redaction leaves readable)."""
    audit_record(
        action=f"sso.{action}",
        organization_id=connection.organization_id,
        target_type="sso_connection",
        target_id=connection.pk,
        target_label=connection.issuer,
        before=before,
        after=after,
    )


def sso_joined(membership, *, groups) -> None:
    """Just-in-time membership: someone the organization's provider vouches for joined."""
    audit_record(
        action="sso.join",
        organization_id=membership.organization_id,
        target_type="membership",
        target_id=membership.pk,
        target_label=_member_label(membership),
        after={"role": membership.role},
        detail={"groups": list(groups)},
        actor=Actor("user", str(membership.user_id), membership.user.email, _address()),
    )


def sso_signed_in(membership, *, subject: str, groups) -> None:
    audit_record(
        action="sso.sign_in",
        organization_id=membership.organization_id,
        target_type="membership",
        target_id=membership.pk,
        target_label=_member_label(membership),
        detail={"subject": subject, "groups": list(groups), "role": membership.role},
        actor=Actor("user", str(membership.user_id), membership.user.email, _address()),
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
    audit_record(
        action="sso.break_glass",
        organization_id=membership.organization_id,
        target_type="membership",
        target_id=membership.pk,
        target_label=_member_label(membership),
        actor=Actor("user", str(membership.user_id), membership.user.email, _address()),
    )


def _address():
    return request_address(current_request())


# -- connected accounts ----------------------------------------------------------------------


def _connection_label(connection) -> str:
    who = connection.user.email if connection.user_id else "shared account"
    return f"{connection.provider.name} ({who})"[:300]


def connection_connected(connection, *, user_id) -> None:
    audit_record(
        action="connection.connect",
        organization_id=connection.organization_id,
        target_type="connection",
        target_id=connection.pk,
        target_label=_connection_label(connection),
        after={"provider": connection.provider.key, "scopes": connection.scopes},
    )


def connection_refresh_failed(connection, *, reason: str) -> None:
    # Written by the call that found the grant gone, so its actor is the system, not a person.
    audit_record(
        action="connection.refresh_fail",
        organization_id=connection.organization_id,
        target_type="connection",
        target_id=connection.pk,
        target_label=_connection_label(connection),
        detail={"reason": reason[:300]},
        actor=Actor("system", "", "token refresh", None),
    )


def connection_revoked(connection, *, reason: str) -> None:
    audit_record(
        action="connection.revoke",
        organization_id=connection.organization_id,
        target_type="connection",
        target_id=connection.pk,
        target_label=_connection_label(connection),
        before={"provider": connection.provider.key, "scopes": connection.scopes},
        detail={"reason": reason},
    )


def provider_changed(provider, action: str, *, before=None, after=None) -> None:
    """connection_provider.create / .update / .delete"""
    audit_record(
        action=f"connection_provider.{action}",
        organization_id=provider.organization_id,
        target_type="connection_provider",
        target_id=provider.pk,
        target_label=f"{provider.name} ({provider.key})"[:300],
        before=before,
        after=after,
    )
