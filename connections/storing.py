"""Writing a connection's tokens: a new consent replaces the row's tokens whole; a refresh
swaps them only if nobody changed the row since it was read (the version), so a refresh token
the provider rotated is stored with its access token in one UPDATE, or not at all."""

from datetime import UTC, datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from audit import events as audit_events
from infra import keys
from infra.redis import sync_client
from vault import crypto

from . import token_cache
from .exchange import Tokens
from .models import Connection, Provider

READY_SECONDS = 600


def _expiry(tokens: Tokens) -> datetime | None:
    return datetime.fromtimestamp(tokens.expires_at, tz=UTC) if tokens.expires_at else None


def store_tokens(
    *, provider: Provider, user_id: int | None, tokens: Tokens, scopes: list[str]
) -> Connection:
    """After a consent: the person's (or the shared) connection, created or replaced."""
    owner = user_id if provider.per_user else None
    with transaction.atomic():
        connection, created = Connection.objects.select_for_update().get_or_create(
            provider=provider,
            user_id=owner,
            defaults={"organization_id": provider.organization_id, "access_token_ciphertext": ""},
        )
        connection.access_token_ciphertext = crypto.encrypt(tokens.access_token)
        connection.refresh_token_ciphertext = (
            crypto.encrypt(tokens.refresh_token) if tokens.refresh_token else ""
        )
        connection.token_type = tokens.token_type
        connection.scopes = sorted(set(scopes))
        connection.expires_at = _expiry(tokens)
        connection.status = Connection.ACTIVE
        connection.refreshed_at = timezone.now()
        connection.version = 1 if created else connection.version + 1
        connection.save()
        audit_events.connection_connected(connection, user_id=user_id)
    if user_id is not None:
        # A call waiting on this person's consent goes on now (need.wait_for_connection).
        ready = keys.connection_ready(provider.organization_id, user_id, provider.key)
        client = sync_client()
        client.rpush(ready, "1")
        client.expire(ready, READY_SECONDS)
    return connection


def swap_refreshed(connection: Connection, tokens: Tokens) -> bool:
    """Store refreshed tokens if the row is still the version that was refreshed; False when
    another process got there first (its tokens stand)."""
    fields = {
        "access_token_ciphertext": crypto.encrypt(tokens.access_token),
        "expires_at": _expiry(tokens),
        "token_type": tokens.token_type,
        "refreshed_at": timezone.now(),
        "updated_at": timezone.now(),
        "version": F("version") + 1,
    }
    if tokens.refresh_token:
        fields["refresh_token_ciphertext"] = crypto.encrypt(tokens.refresh_token)
    if tokens.scopes:
        fields["scopes"] = sorted(set(tokens.scopes))
    with transaction.atomic():
        updated = Connection.objects.filter(
            pk=connection.pk, version=connection.version, status=Connection.ACTIVE
        ).update(**fields)
        if updated:  # an UPDATE sends no post_save: drop the old token everywhere by hand
            token_cache.changed(connection.organization_id)
    return updated == 1


def mark_needs_consent(connection: Connection, reason: str) -> None:
    with transaction.atomic():
        Connection.objects.filter(pk=connection.pk, version=connection.version).update(
            status=Connection.NEEDS_CONSENT, version=F("version") + 1, updated_at=timezone.now()
        )
        token_cache.changed(connection.organization_id)
    audit_events.connection_refresh_failed(connection, reason=reason)
