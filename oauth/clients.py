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

from . import cimd
from .client_metadata import validate_metadata
from .errors import OAuthError
from .models import Client, digest_token

CLIENT_ID_PREFIX = "gmcp_client_"
SECRET_PREFIX = "gmcp_cs_"


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
        client = Client.objects.filter(
            client_id=client_id or "", kind__in=(Client.REGISTERED, Client.SERVICE_ACCOUNT)
        ).first()
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
