"""The token endpoint's grants (authorization_code, refresh_token) and revocation (RFC 7009).

Access tokens are short-lived and bound to one server (its resource URI is their audience).
Refresh tokens rotate on every use; presenting a rotated one again within
OAUTH_REFRESH_GRACE_SECONDS (a client refreshing twice at once, or retrying a lost answer) yields
the same new pair, not one more each time; after that it is a replay and the whole grant is
revoked (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2). The pair is kept for that window encrypted with the
vault's keys on the rotated token's row, which otherwise holds its digest only.
"""

import json
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit import events as audit_events
from vault import crypto

from . import authorization
from .errors import OAuthError
from .grants import grant_revoke
from .models import SCOPE_OFFLINE, AccessToken, AuthorizationCode, Grant, RefreshToken, digest_token

ACCESS_PREFIX = "gmcp_at_"
REFRESH_PREFIX = "gmcp_rt_"


def tokens_issue(*, grant: Grant, client, refresh_allowed: bool = True) -> dict:
    """An access token under the grant, and a refresh token when the grant or the client asked
    for one (never for the assertion and client-credentials grants: the client presents its
    assertion or credentials again, RFC 6749 §4.4.3)."""
    now = timezone.now()
    access = ACCESS_PREFIX + secrets.token_urlsafe(32)
    lifetime = settings.OAUTH_ACCESS_TOKEN_SECONDS
    AccessToken.objects.create(
        digest=digest_token(access), grant=grant, expires_at=now + timedelta(seconds=lifetime)
    )
    body = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": lifetime,
        "scope": grant.scope,
    }
    wants_refresh = SCOPE_OFFLINE in grant.scopes or "refresh_token" in (client.grant_types or [])
    if refresh_allowed and wants_refresh:
        refresh = REFRESH_PREFIX + secrets.token_urlsafe(32)
        RefreshToken.objects.create(
            digest=digest_token(refresh),
            grant=grant,
            expires_at=now + timedelta(seconds=settings.OAUTH_REFRESH_TOKEN_SECONDS),
        )
        body["refresh_token"] = refresh
    audit_events.tokens_issued(grant, refresh="refresh_token" in body)
    if client.first_used_at is None:
        type(client).objects.filter(pk=client.pk, first_used_at=None).update(first_used_at=now)
    return body


def _check_resource(resource: str | None, grant: Grant) -> None:
    if resource is not None and resource.rstrip("/") != grant.resource:
        raise OAuthError("invalid_target", "resource does not match the authorized server")


def token_from_code(
    *, client, code: str | None, redirect_uri: str | None, code_verifier, resource
) -> dict:
    if not code:
        raise OAuthError("invalid_request", "code is required")
    with transaction.atomic():
        row = (
            AuthorizationCode.objects.select_for_update()
            .select_related("grant")
            .filter(digest=digest_token(code))
            .first()
        )
        if row is None or row.grant.client_id != client.pk:
            raise OAuthError("invalid_grant", "Unknown authorization code")
        grant = row.grant
        reused = row.used_at is not None
        if not reused:
            row.used_at = timezone.now()
            row.save(update_fields=["used_at"])
    if reused:
        # A code used twice was probably stolen: end what it produced (RFC 6749 §4.1.2).
        grant_revoke(grant=grant, reason="code reused")
        raise OAuthError("invalid_grant", "The authorization code was already used")
    if row.expires_at <= timezone.now():
        raise OAuthError("invalid_grant", "The authorization code has expired")
    if grant.revoked_at is not None:
        raise OAuthError("invalid_grant", "The authorization was revoked")
    if redirect_uri != row.redirect_uri:
        raise OAuthError("invalid_grant", "redirect_uri does not match the authorization request")
    if not authorization.pkce_matches(verifier=code_verifier, challenge=row.code_challenge):
        raise OAuthError("invalid_grant", "code_verifier does not match the code_challenge")
    _check_resource(resource, grant)
    return tokens_issue(grant=grant, client=client)


def token_from_refresh(*, client, refresh_token: str | None, resource, scope) -> dict:
    if not refresh_token:
        raise OAuthError("invalid_request", "refresh_token is required")
    now = timezone.now()
    with transaction.atomic():
        # The row lock orders concurrent refreshes of one token: the first rotates it and keeps
        # the new pair sealed on it; the others, inside the grace window, get that same pair.
        row = (
            RefreshToken.objects.select_for_update()
            .select_related("grant")
            .filter(digest=digest_token(refresh_token))
            .first()
        )
        if row is None or row.grant.client_id != client.pk:
            raise OAuthError("invalid_grant", "Unknown refresh token")
        grant = row.grant
        if grant.revoked_at is not None or row.expires_at <= now:
            raise OAuthError("invalid_grant", "The refresh token is no longer valid")
        replayed = row.rotated_at is not None and not row.in_grace(now)
        if not replayed:
            _check_resource(resource, grant)
            if scope and not set(scope.split()) <= set(grant.scopes):
                raise OAuthError("invalid_scope", "A refresh cannot widen the granted scope")
            again = _successor(row, now) if row.rotated_at is not None else None
            if again is not None:
                return again
            body = tokens_issue(grant=grant, client=client)
            row.rotated_at = row.rotated_at or now
            row.successor = _seal(body, now)
            row.save(update_fields=["rotated_at", "successor"])
            Grant.objects.filter(pk=grant.pk).update(last_used_at=now)
            return body
    grant_revoke(grant=grant, reason="refresh token reuse")
    raise OAuthError("invalid_grant", "The refresh token was already used")


def _seal(body: dict, now) -> str:
    return crypto.encrypt(json.dumps({"body": body, "issued": now.timestamp()}))


def _successor(row: RefreshToken, now) -> dict | None:
    """The pair a rotated token was exchanged for, while the grace window lasts and its access
    token still stands; None (then one more pair is minted) when it cannot be read back."""
    if not row.successor:
        return None
    grace = settings.OAUTH_REFRESH_GRACE_SECONDS
    sealed = crypto.decrypt_recent(row.successor, max_age_seconds=grace, now=now.timestamp())
    if sealed is None:
        return None
    kept = json.loads(sealed)
    body = dict(kept["body"])
    revoked = AccessToken.objects.filter(
        digest=digest_token(body["access_token"]), revoked_at__isnull=False
    )
    if revoked.exists():
        return None
    elapsed = int(now.timestamp() - kept["issued"])
    body["expires_in"] = max(int(body["expires_in"]) - elapsed, 1)
    return body


def successors_forget(*, now=None) -> int:
    """Empty the sealed pairs of tokens whose grace window is over (they are unreadable by
    then anyway: vault.crypto.decrypt_recent)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.OAUTH_REFRESH_GRACE_SECONDS)
    return (
        RefreshToken.objects.filter(rotated_at__lt=cutoff)
        .exclude(successor="")
        .update(successor="")
    )


def token_revoke(*, client, token: str | None) -> None:
    """RFC 7009: always succeeds for the caller; a refresh token ends its whole grant."""
    if not token:
        raise OAuthError("invalid_request", "token is required")
    digest = digest_token(token)
    access = AccessToken.objects.select_related("grant").filter(digest=digest).first()
    if access is not None and access.grant.client_id == client.pk:
        from .grants import bump_tokens

        AccessToken.objects.filter(pk=access.pk).update(revoked_at=timezone.now())
        audit_events.token_revoked(access.grant)
        transaction.on_commit(lambda: bump_tokens([digest]))
        return
    refresh = RefreshToken.objects.select_related("grant").filter(digest=digest).first()
    if refresh is not None and refresh.grant.client_id == client.pk:
        grant_revoke(grant=refresh.grant, reason="revoked by the client")


def tokens_collect_expired(*, older_than: timedelta = timedelta(days=1)) -> int:
    """Delete codes and tokens that expired a while ago (and grants left with nothing)."""
    cutoff = timezone.now() - older_than
    successors_forget()
    deleted = 0
    for model in (AuthorizationCode, AccessToken, RefreshToken):
        count, _ = model.objects.filter(expires_at__lt=cutoff).delete()
        deleted += count
    return deleted
