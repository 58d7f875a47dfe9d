"""OAuth clients: Dynamic Client Registration (RFC 7591) and lookup by client_id.

Registration is cheap and tolerant because claude.ai registers a new client on every fresh
connection (sometimes twice); registrations that never obtain a token are collected by
`oauth.tasks.collect_unused_clients`. An https URL as client_id is a Client ID Metadata
Document (see cimd.py).
"""

import secrets
import time
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from infra import keys
from infra.redis import sync_client

from . import cimd, redirects
from .errors import OAuthError
from .models import SCOPES, Client, digest_token

CLIENT_ID_PREFIX = "gmcp_client_"
SECRET_PREFIX = "gmcp_cs_"
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
GRANT_TYPES = ("authorization_code", "refresh_token")
TEXT_LIMITS = {"client_name": 200, "client_uri": 2000, "logo_uri": 2000, "software_id": 200}


def registration_retry_after(*, source_ip: str | None) -> int | None:
    """Seconds to wait when this address registered too often this minute, else None."""
    limit = settings.OAUTH_REGISTRATIONS_PER_MINUTE
    if not limit:
        return None
    now = time.time()
    key = keys.oauth_registrations(source_ip or "-", int(now // 60))
    pipe = sync_client().pipeline(transaction=False)
    pipe.incr(key)
    pipe.expire(key, 120)
    count, _ = pipe.execute()
    return 60 - int(now % 60) if count > limit else None


def _text(metadata: dict, name: str) -> str:
    value = metadata.get(name, "")
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > TEXT_LIMITS.get(name, 200):
        raise OAuthError("invalid_client_metadata", f"{name} must be a short string")
    return value


def validate_metadata(metadata) -> dict:
    """The registrable subset of client metadata, or OAuthError (RFC 7591 §2, §3.2.2)."""
    if not isinstance(metadata, dict):
        raise OAuthError("invalid_client_metadata", "The body must be a JSON object")
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > 20:
        raise OAuthError("invalid_redirect_uri", "redirect_uris must list 1 to 20 URIs")
    for uri in uris:
        why = redirects.problem(uri)
        if why:
            raise OAuthError("invalid_redirect_uri", f"redirect URI {uri!r} {why}")
    method = metadata.get("token_endpoint_auth_method") or "none"
    if method not in AUTH_METHODS:
        raise OAuthError(
            "invalid_client_metadata",
            f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}",
        )
    grant_types = metadata.get("grant_types") or ["authorization_code", "refresh_token"]
    if not isinstance(grant_types, list) or not set(grant_types) <= set(GRANT_TYPES):
        raise OAuthError(
            "invalid_client_metadata", "grant_types may only be authorization_code, refresh_token"
        )
    response_types = metadata.get("response_types") or ["code"]
    if response_types != ["code"]:
        raise OAuthError("invalid_client_metadata", 'response_types must be ["code"]')
    scope = metadata.get("scope") or ""
    if not isinstance(scope, str) or len(scope) > 500:
        raise OAuthError("invalid_client_metadata", "scope must be a string")
    return {
        "redirect_uris": list(uris),
        "token_endpoint_auth_method": method,
        "grant_types": list(grant_types),
        "scope": " ".join(s for s in scope.split() if s in SCOPES),
        **{name: _text(metadata, name) for name in TEXT_LIMITS},
        "software_version": _text(metadata, "software_version")[:100],
    }


def client_register(*, metadata, source_ip: str | None) -> tuple[Client, str | None]:
    """Create a client; returns it and its raw secret (None for public clients)."""
    fields = validate_metadata(metadata)
    raw_secret = None
    if fields["token_endpoint_auth_method"] != "none":
        raw_secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    client = Client.objects.create(
        client_id=CLIENT_ID_PREFIX + secrets.token_urlsafe(18),
        kind=Client.REGISTERED,
        secret_digest=digest_token(raw_secret) if raw_secret else "",
        registered_from=source_ip,
        **fields,
    )
    return client, raw_secret


def registration_response(client: Client, raw_secret: str | None) -> dict:
    body = {
        "client_id": client.client_id,
        "client_id_issued_at": int(client.created_at.timestamp()),
        "redirect_uris": client.redirect_uris,
        "token_endpoint_auth_method": client.token_endpoint_auth_method,
        "grant_types": client.grant_types,
        "response_types": ["code"],
    }
    for name in ("client_name", "client_uri", "logo_uri", "scope", "software_id"):
        if getattr(client, name):
            body[name] = getattr(client, name)
    if raw_secret:
        body["client_secret"] = raw_secret
        body["client_secret_expires_at"] = 0
    return body


def client_resolve(*, client_id: str) -> Client:
    """The client named by a request's client_id; raises OAuthError(invalid_client)."""
    if not isinstance(client_id, str) or not client_id or len(client_id) > 2000:
        raise OAuthError("invalid_client", "Unknown client_id", 401)
    if cimd.looks_like_document_url(client_id):
        return cimd.client_from_document(client_id=client_id)
    client = Client.objects.filter(client_id=client_id, kind=Client.REGISTERED).first()
    if client is None:
        # claude.ai re-registers when it sees invalid_client.
        raise OAuthError("invalid_client", "Unknown client_id", 401)
    return client


def client_authenticate(*, client_id: str, client_secret: str | None) -> Client:
    """The token and revocation endpoints' client check (public clients send no secret)."""
    if cimd.looks_like_document_url(client_id or ""):
        client = Client.objects.filter(client_id=client_id, kind=Client.METADATA_DOCUMENT).first()
    else:
        client = Client.objects.filter(client_id=client_id or "", kind=Client.REGISTERED).first()
    if client is None:
        raise OAuthError("invalid_client", "Unknown client_id", 401)
    if client.is_public:
        return client
    if not client_secret or not secrets.compare_digest(
        digest_token(client_secret), client.secret_digest
    ):
        raise OAuthError("invalid_client", "Client authentication failed", 401)
    return client


def clients_collect_unused(*, older_than: timedelta | None = None) -> int:
    """Delete self-registered clients that never obtained a token."""
    age = older_than or timedelta(hours=settings.OAUTH_UNUSED_CLIENT_HOURS)
    stale = Client.objects.filter(
        kind=Client.REGISTERED, first_used_at=None, created_at__lt=timezone.now() - age
    )
    deleted, _ = stale.delete()
    return deleted
