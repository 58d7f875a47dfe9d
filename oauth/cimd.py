"""Client ID Metadata Documents: an https URL as client_id, whose JSON names the client and
its redirect URIs (draft-ietf-oauth-client-id-metadata-document, MCP 2025-11-25).

Fetched through the SSRF guard with a size and time limit; the copy is kept in the Client table
for as long as the response's cache headers allow. http on loopback is allowed only when
OAUTH_CIMD_ALLOW_HTTP_LOOPBACK is set (tests).
"""

import ipaddress
import re
from datetime import timedelta

import orjson
from django.conf import settings
from django.utils import timezone

from servers.outbound.client import guarded_request_sync
from servers.outbound.errors import OutboundError

from . import redirects
from .client_metadata import validate_metadata
from .errors import OAuthError
from .models import Client

DEFAULT_MAX_AGE = 3600
MAX_MAX_AGE = 86400
LOOPBACK_NETWORKS = [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")]


def looks_like_document_url(client_id: str) -> bool:
    if client_id.startswith("https://"):
        return True
    return bool(
        settings.OAUTH_CIMD_ALLOW_HTTP_LOOPBACK
        and client_id.startswith("http://")
        and redirects.is_loopback(client_id)
    )


def _check_url(url: str) -> None:
    # Read as browsers read it (redirects.py says why): the verified name on the consent page
    # is this URL, so it must name one host for every reader, the SSRF guard's fetch included.
    # (Written as browsers serialize it, it has no dot segments either: they serialize away.)
    why = redirects.url_problem(url)
    if why:
        raise OAuthError("invalid_client", f"A client_id URL {why}")
    parsed = redirects.parse(url)
    if parsed is None or not parsed.path.strip("/"):
        raise OAuthError("invalid_client", "A client_id URL needs a path")


def _max_age(cache_control: str) -> int:
    directives = cache_control.lower()
    if "no-store" in directives or "no-cache" in directives:
        return 0
    found = re.search(r"max-age=(\d+)", directives)
    return min(int(found.group(1)), MAX_MAX_AGE) if found else DEFAULT_MAX_AGE


def _fetch(url: str) -> tuple[dict, int]:
    networks = LOOPBACK_NETWORKS if url.startswith("http://") else None
    try:
        response = guarded_request_sync(
            "GET",
            url,
            headers={"accept": "application/json"},
            timeout=settings.OAUTH_CIMD_TIMEOUT_SECONDS,
            max_bytes=settings.OAUTH_CIMD_MAX_BYTES,
            follow_redirects=False,
            networks=networks,
        )
    except OutboundError as exc:
        raise OAuthError("invalid_client", f"Could not fetch the client metadata: {exc}") from None
    if response.status_code != 200:
        raise OAuthError(
            "invalid_client", f"The client metadata document answered {response.status_code}"
        )
    if response.truncated:
        raise OAuthError("invalid_client", "The client metadata document is too large")
    try:
        document = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        raise OAuthError("invalid_client", "The client metadata document is not JSON") from None
    return document, _max_age(response.headers.get("cache-control", ""))


def _fields(url: str, document) -> dict:
    if not isinstance(document, dict) or document.get("client_id") != url:
        raise OAuthError("invalid_client", "The metadata document's client_id is not its URL")
    if "client_secret" in document or document.get("token_endpoint_auth_method", "none") != (
        "none"
    ):
        raise OAuthError("invalid_client", "A metadata-document client must be public (none)")
    try:
        return validate_metadata(document)
    except OAuthError as exc:
        raise OAuthError("invalid_client", exc.description) from None


def client_from_document(*, client_id: str) -> Client:
    """The Client row for a document URL, fetched again once its cached copy has expired."""
    _check_url(client_id)
    client = Client.objects.filter(client_id=client_id).first()
    now = timezone.now()
    if client and client.metadata_expires_at and client.metadata_expires_at > now:
        return client
    document, max_age = _fetch(client_id)
    fields = _fields(client_id, document)
    fields["metadata_expires_at"] = now + timedelta(seconds=max_age)
    if client is None:
        client, _ = Client.objects.update_or_create(
            client_id=client_id, defaults={"kind": Client.METADATA_DOCUMENT, **fields}
        )
    else:
        for name, value in fields.items():
            setattr(client, name, value)
        client.save()
    return client
