"""Ending connections: by the person (their Connected accounts page), by admins (per member),
and all of a person's connections in an organization when they leave it (signals.py).

The row goes (its encrypted tokens with it) after the provider was told, where it has a
revocation endpoint (RFC 7009), so the upstream grant ends too; a provider that cannot be
reached does not keep a connection alive here."""

import logging

from asgiref.sync import async_to_sync

from accounts import policy
from accounts.models import User
from accounts.policy import Action
from audit import events as audit_events
from servers.outbound import OutboundError, guarded_request

from .exchange import TOKEN_TIMEOUT
from .models import Connection

log = logging.getLogger(__name__)


async def _tell_provider(connection: Connection) -> None:
    provider = connection.provider
    if not provider.revocation_url:
        return
    token = connection.refresh_token() or connection.access_token()
    form = {"token": token, "client_id": provider.client_id}
    secret = provider.client_secret()
    if secret:
        form["client_secret"] = secret
    try:
        await guarded_request(
            "POST",
            provider.revocation_url,
            organization_id=provider.organization_id,
            data=form,
            timeout=TOKEN_TIMEOUT,
            max_bytes=64 * 1024,
        )
    except OutboundError as exc:
        log.info("revocation at %s failed: %s", provider.key, exc.message)


def _revoke(connection: Connection, reason: str) -> None:
    try:
        async_to_sync(_tell_provider)(connection)
    except Exception:  # a token unreadable after a key rotation: nothing to tell upstream
        log.info("revocation of connection %s upstream skipped", connection.pk, exc_info=True)
    audit_events.connection_revoked(connection, reason=reason)
    connection.delete()


def revoke_own(*, user: User, connection: Connection) -> None:
    if connection.user_id != user.pk:
        raise policy.NotFound("No such connection.")
    _revoke(connection, "by the person")


def revoke_member(*, actor: User, connection: Connection) -> None:
    """An admin revokes a connection of the organization (a member's, or the shared one)."""
    policy.require(user=actor, org=connection.organization, action=Action.CONNECTIONS_MANAGE)
    _revoke(connection, "by an admin")


def revoke_all(*, organization_id: int, user_id: int, reason: str) -> int:
    """Every connection the person holds in the organization (removal, deprovisioning)."""
    connections = list(
        Connection.objects.select_related("provider", "user").filter(
            organization_id=organization_id, user_id=user_id
        )
    )
    for connection in connections:
        _revoke(connection, reason)
    return len(connections)
