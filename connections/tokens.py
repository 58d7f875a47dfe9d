"""A call's token: the caller's connection to the provider the tool names, refreshed before it
expires.

Only tools that declare a connection come here (the compiled tool carries the requirement), so
a call without one runs no query of this module. A refresh runs under a Redis lock per
connection, so two processes never refresh one token at once: the one that waited reads the
row again and uses the tokens the other stored.
"""

import contextlib
import time
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.utils import timezone
from redis.exceptions import LockError

from infra import keys
from infra.redis import async_client
from mcp_protocol.caller import Caller
from servers import invalidation

from . import exchange, token_cache
from .models import Connection, Provider
from .requirement import Requirement
from .storing import mark_needs_consent, swap_refreshed

# Refresh this long before expiry, or at half the token's life when that is shorter (a token
# that lives a few seconds is still used for most of them).
REFRESH_MARGIN_SECONDS = 60.0
LOCK_SECONDS = 30
LOCK_WAIT_SECONDS = 20.0


@dataclass
class Token:
    value: str
    connection_id: int
    provider: str
    label: str = field(default="")  # what the call log names: "github (shared)" / "github"


class ConnectionUnavailable(Exception):
    """The call cannot get a token, and no consent would help (a service account on a
    per-user provider, an unknown provider): the message is for the model and the person."""


class ConnectionNeeded(Exception):
    """The person must connect (again): no connection, too few scopes, or the provider refused
    a refresh. need.py turns it into a URL elicitation or a link."""

    def __init__(self, provider: Provider, scopes: list[str], reason: str) -> None:
        super().__init__(reason)
        self.provider = provider
        self.scopes = scopes
        self.reason = reason


def _provider(organization_id: int, key: str) -> Provider | None:
    # Before anything is cached in this process, its re-check of the change log runs.
    invalidation.ensure_started()
    return Provider.objects.filter(organization_id=organization_id, key=key).first()


def _connection(provider: Provider, user_id: int | None) -> Connection | None:
    owner = user_id if provider.per_user else None
    return (
        Connection.objects.select_related("provider")
        .filter(provider=provider, user_id=owner)
        .first()
    )


def _refresh_at(connection: Connection) -> float | None:
    """When the token is due for a refresh (time.time()); None when it does not expire."""
    if connection.expires_at is None:
        return None
    expires = connection.expires_at.timestamp()
    issued = (connection.refreshed_at or connection.created_at).timestamp()
    margin = min(REFRESH_MARGIN_SECONDS, max(expires - issued, 0.0) / 2)
    return expires - margin


def _due(connection: Connection, now: float) -> bool:
    due = _refresh_at(connection)
    return due is not None and due <= now


async def token_for(
    *, caller: Caller, organization_id: int, requirement: Requirement, stale: str = ""
) -> Token:
    """The caller's token; `stale`: a token the API just refused (401), so a refresh is tried
    even before expiry (an upstream revocation then shows as a refused refresh).

    A warm call finds it in this process's cache (token_cache.py): no SQL, no Redis."""
    key = (organization_id, requirement.provider, caller.principal, caller.principal_id)
    now = time.time()
    if not stale:
        cached = token_cache.get(key, now)
        if cached is not None and (not cached.scopes or set(requirement.scopes) <= cached.scopes):
            return Token(cached.value, cached.connection_id, cached.provider, cached.label)
    epoch = invalidation.epoch()
    token, connection = await _token_from_rows(
        caller=caller, organization_id=organization_id, requirement=requirement, stale=stale
    )
    due = _refresh_at(connection)
    longest = now + token_cache.MAX_AGE_SECONDS
    token_cache.put(
        key,
        token_cache.Entry(
            value=token.value,
            connection_id=token.connection_id,
            provider=token.provider,
            label=token.label,
            scopes=frozenset(connection.scopes),
            fresh_until=min(due or longest, longest),
        ),
        epoch,
    )
    return token


async def _token_from_rows(
    *, caller: Caller, organization_id: int, requirement: Requirement, stale: str
) -> tuple[Token, Connection]:
    provider = await sync_to_async(_provider)(organization_id, requirement.provider)
    if provider is None:
        raise ConnectionUnavailable(
            f"This tool needs a connection to {requirement.provider!r}, which this organization "
            "has not configured: an admin adds it under Connected accounts."
        )
    wanted = sorted({*provider.scopes, *requirement.scopes})
    user_id: int | None = None
    if provider.per_user:
        if caller.principal != "person" or caller.principal_id is None:
            raise ConnectionUnavailable(
                f"This tool acts as the person calling it on {provider.name}, and this caller is "
                f"{'a service account' if caller.principal == 'service_account' else 'no person'}"
                ": call it with a person's API key or OAuth sign-in, or ask an admin to make "
                f"{provider.name} a shared account."
            )
        user_id = caller.principal_id
    connection = await sync_to_async(_connection)(provider, user_id)
    if connection is None or connection.status == Connection.REVOKED:
        if user_id is None:
            raise ConnectionUnavailable(
                f"The organization's shared {provider.name} account is not connected: an admin "
                "connects it under Connected accounts."
            )
        raise ConnectionNeeded(provider, wanted, "not connected")
    if connection.status == Connection.NEEDS_CONSENT:
        raise ConnectionNeeded(provider, wanted, "consent needed again")
    missing = set(requirement.scopes) - set(connection.scopes)
    if missing and connection.scopes:
        raise ConnectionNeeded(provider, wanted, f"missing scopes {' '.join(sorted(missing))}")
    if _due(connection, time.time()) or (stale and connection.access_token() == stale):
        connection = await _refreshed(connection, wanted, forced=bool(stale))
    label = provider.key if provider.per_user else f"{provider.key} (shared)"
    return Token(connection.access_token(), connection.pk, provider.key, label), connection


async def _refreshed(connection: Connection, wanted: list[str], *, forced: bool) -> Connection:
    provider = connection.provider
    redis = async_client()
    lock = redis.lock(
        keys.connection_refresh_lock(connection.pk),
        timeout=LOCK_SECONDS,
        blocking_timeout=LOCK_WAIT_SECONDS,
    )
    if not await lock.acquire():
        raise ConnectionUnavailable(
            f"{provider.name} is slow to refresh the connection; try the call again shortly."
        )
    try:
        # Another process may have refreshed while this one waited for the lock.
        current = await sync_to_async(_connection)(provider, connection.user_id)
        if current is None or current.status != Connection.ACTIVE:
            raise ConnectionNeeded(provider, wanted, "consent needed again")
        if current.version != connection.version:
            return current
        if not forced and not _due(current, time.time()):
            return current
        refresh_token = current.refresh_token()
        if not refresh_token:
            await sync_to_async(mark_needs_consent)(current, "expired, and no refresh token")
            raise ConnectionNeeded(provider, wanted, "expired")
        try:
            tokens = await exchange.refresh(provider, refresh_token=refresh_token)
        except exchange.ProviderRefused as exc:
            if exc.error in ("invalid_grant", "invalid_token", "unauthorized_client"):
                await sync_to_async(mark_needs_consent)(current, exc.message)
                raise ConnectionNeeded(
                    provider, wanted, "the provider refused the refresh"
                ) from None
            raise ConnectionUnavailable(
                f"Could not refresh the {provider.name} connection: {exc.message}."
            ) from None
        await sync_to_async(swap_refreshed)(current, tokens)
        fresh = await sync_to_async(_connection)(provider, connection.user_id)
        assert fresh is not None
        return fresh
    finally:
        # The lock may have expired while the provider was slow: then there is nothing to release.
        with contextlib.suppress(LockError):
            await lock.release()


def touch(connection_id: int) -> None:
    Connection.objects.filter(pk=connection_id).update(last_used_at=timezone.now())
