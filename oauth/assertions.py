"""Signed JWT assertions at the token endpoint (RFC 7523): verifying one against a JWKS, its
time claims, and its `jti` once.

Two callers: the enterprise identity provider's ID-JAG (oauth/id_jag.py, keys from the
provider's JWKS URL) and a service account's `private_key_jwt` client assertion
(oauth/service_clients.py, keys registered with the client). Asymmetric algorithms only: an
HMAC or `none` assertion would be checked against nothing the signer alone holds.
"""

import hashlib
import threading
import time
from typing import Any, cast

import orjson
from django.conf import settings
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from infra import keys
from infra.redis import sync_client
from servers.outbound.client import guarded_request_sync
from servers.outbound.errors import OutboundError

from .cimd import LOOPBACK_NETWORKS
from .errors import OAuthError

ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"]
JWKS_MAX_BYTES = 256 * 1024
JWKS_TIMEOUT_SECONDS = 5
# An unknown `kid` fetches the JWKS again at once (the provider rotated its keys), but no more
# often than this per URL, so forged kids cannot make us hammer the provider.
REFETCH_SECONDS = 60


def unverified(token: str, error: str = "invalid_grant") -> tuple[dict, dict]:
    """(header, claims) of a compact JWS, read before its signature is checked: only to find
    which keys and which configuration verify it."""
    if not isinstance(token, str) or not token or len(token) > 16 * 1024:
        raise OAuthError(error, "The assertion is missing or too large")
    try:
        compact = jws.extract_compact(token.encode())
        claims = orjson.loads(compact.payload)
    except (JoseError, ValueError):
        raise OAuthError(error, "The assertion is not a signed JWT") from None
    if not isinstance(claims, dict):
        raise OAuthError(error, "The assertion's payload is not a JSON object")
    return dict(compact.headers()), claims


def verify(token: str, key_set: KeySet, error: str = "invalid_grant") -> dict:
    """The claims of a token whose signature one of `key_set`'s keys made."""
    try:
        decoded = jwt.decode(token, key_set, algorithms=ALGORITHMS)
    except (JoseError, ValueError):
        raise OAuthError(error, "The assertion's signature does not verify") from None
    return dict(decoded.claims)


def check_times(claims: dict, error: str = "invalid_grant") -> None:
    """exp (required), nbf and iat within the allowed skew; iat not older than the maximum age."""
    now = time.time()
    skew = settings.OAUTH_ASSERTION_SKEW_SECONDS
    exp, nbf, iat = claims.get("exp"), claims.get("nbf"), claims.get("iat")
    if not isinstance(exp, int | float) or isinstance(exp, bool):
        raise OAuthError(error, "The assertion has no exp")
    if exp + skew < now:
        raise OAuthError(error, "The assertion has expired")
    if nbf is not None and (not _number(nbf) or nbf - skew > now):
        raise OAuthError(error, "The assertion is not valid yet (nbf)")
    if iat is not None:
        if not _number(iat) or iat - skew > now:
            raise OAuthError(error, "The assertion was issued in the future (iat)")
        if now - iat > settings.OAUTH_ASSERTION_MAX_SECONDS:
            raise OAuthError(error, "The assertion was issued too long ago (iat)")


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def audience_matches(claims: dict, expected: str) -> bool:
    aud = claims.get("aud")
    wanted = expected.rstrip("/")
    values = aud if isinstance(aud, list) else [aud]
    return any(isinstance(value, str) and value.rstrip("/") == wanted for value in values)


def use_jti_once(issuer: str, claims: dict, error: str = "invalid_grant") -> None:
    """Remember the assertion's jti until it expires; raises when it was seen before."""
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti or len(jti) > 500:
        raise OAuthError(error, "The assertion has no jti")
    ttl = max(int(claims["exp"] - time.time()) + settings.OAUTH_ASSERTION_SKEW_SECONDS, 1)
    key = keys.oauth_assertion_jti(_digest(issuer), _digest(jti))
    if not sync_client().set(key, b"1", nx=True, ex=ttl):
        raise OAuthError(error, "The assertion was already used (jti replay)")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def key_set_of(jwks: dict, error: str = "invalid_client") -> KeySet:
    """A KeySet from a JWKS document, public keys only."""
    try:
        key_set = KeySet.import_key_set(cast(Any, jwks))
    except (JoseError, ValueError, TypeError, KeyError):
        raise OAuthError(error, "The JWKS holds no usable key") from None
    for key in key_set.keys:
        if key.key_type == "oct" or key.is_private:
            raise OAuthError(error, "A JWKS may hold public keys only")
    return key_set


class JwksCache:
    """Key sets by JWKS URL, each kept OAUTH_JWKS_CACHE_SECONDS (bounded: providers rotate)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sets: dict[str, tuple[float, KeySet]] = {}

    def get(self, url: str, *, kid: str | None) -> KeySet:
        now = time.monotonic()
        with self._lock:
            kept = self._sets.get(url)
        if kept is not None:
            fetched, key_set = kept
            fresh = now - fetched < settings.OAUTH_JWKS_CACHE_SECONDS
            known = kid is None or any(k.kid == kid for k in key_set.keys)
            if fresh and (known or now - fetched < REFETCH_SECONDS):
                return key_set
        key_set = key_set_of(_fetch_jwks(url), error="invalid_grant")
        with self._lock:
            self._sets[url] = (now, key_set)
            if len(self._sets) > 1000:  # never more than the configured providers, in practice
                self._sets.pop(next(iter(self._sets)))
        return key_set

    def clear(self) -> None:
        with self._lock:
            self._sets.clear()


jwks_cache = JwksCache()


def _fetch_jwks(url: str) -> dict:
    """The provider's JWKS, through the SSRF guard (https; http on loopback in tests only)."""
    loopback = settings.OAUTH_JWKS_ALLOW_HTTP_LOOPBACK and url.startswith("http://")
    if not url.startswith("https://") and not loopback:
        raise OAuthError("invalid_grant", "The identity provider's JWKS URL must be https")
    try:
        response = guarded_request_sync(
            "GET",
            url,
            headers={"accept": "application/json"},
            timeout=JWKS_TIMEOUT_SECONDS,
            max_bytes=JWKS_MAX_BYTES,
            follow_redirects=False,
            networks=LOOPBACK_NETWORKS if loopback else None,
        )
    except OutboundError:
        raise OAuthError(
            "invalid_grant", "The identity provider's keys could not be fetched"
        ) from None
    if response.status_code != 200 or response.truncated:
        raise OAuthError("invalid_grant", "The identity provider's keys could not be fetched")
    try:
        document = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        raise OAuthError("invalid_grant", "The identity provider's JWKS is not JSON") from None
    if not isinstance(document, dict):
        raise OAuthError("invalid_grant", "The identity provider's JWKS is not a key set")
    return document
