"""OpenID Connect as a relying party: discovery, the authorization request (code flow with
PKCE, state and nonce), the code exchange and the ID token's checks.

authlib builds the protocol messages (the authorization URI, the token request, the PKCE
challenge, random values) and joserfc checks the ID token: signature against the provider's
published keys, issuer, audience, authorized party, expiry, issued-at and nonce. Every fetch goes
through the SSRF guard (servers.outbound) with the organization's network allowances.
"""

import base64
import binascii
from dataclasses import dataclass
from urllib.parse import quote

from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from servers.outbound.client import guarded_request_sync
from servers.outbound.errors import OutboundError

SCOPE = "openid email profile"
# Asymmetric algorithms only: a shared-secret (HS*) ID token could be minted by anyone holding
# the client secret, and "none" is never acceptable.
ALGORITHMS = [
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
]
LEEWAY_SECONDS = 60
TIMEOUT_SECONDS = 10
MAX_DOCUMENT_BYTES = 512 * 1024


class SsoError(Exception):
    """Something a person signing in (or the admin configuring it) should read; never a
    traceback, never a secret."""


@dataclass(frozen=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    token_auth_methods: tuple[str, ...]
    algorithms: tuple[str, ...]
    scopes: tuple[str, ...] = ()

    def scope_for(self, groups_claim: str) -> str:
        """openid email profile, and the groups claim's scope where the provider offers one by
        that name (Okta's and Keycloak's `groups`; Entra ID puts groups in by its app settings)."""
        return f"{SCOPE} {groups_claim}" if groups_claim in self.scopes else SCOPE


@dataclass(frozen=True)
class Flow:
    """What the authorization request committed to, kept in the session until the callback."""

    state: str
    nonce: str
    code_verifier: str
    url: str


def _get_json(url: str, *, organization_id: int, what: str) -> dict:
    try:
        response = guarded_request_sync(
            "GET",
            url,
            organization_id=organization_id,
            headers={"accept": "application/json"},
            timeout=TIMEOUT_SECONDS,
            max_bytes=MAX_DOCUMENT_BYTES,
            follow_redirects=False,
        )
    except OutboundError as exc:
        raise SsoError(f"Could not fetch the provider's {what}: {exc}") from None
    if response.status_code != 200 or response.truncated:
        raise SsoError(f"The provider's {what} answered {response.status_code}.")
    try:
        document = response.json()
    except ValueError:
        raise SsoError(f"The provider's {what} is not JSON.") from None
    if not isinstance(document, dict):
        raise SsoError(f"The provider's {what} is not a JSON object.")
    return document


def discover(issuer: str, *, organization_id: int) -> Provider:
    """The provider's metadata (OpenID Connect Discovery 1.0). Its `issuer` must be exactly the
    configured one (section 4.3): a document for another issuer is refused."""
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    document = _get_json(url, organization_id=organization_id, what="discovery document")
    if document.get("issuer") != issuer:
        raise SsoError(
            f"The discovery document names the issuer {document.get('issuer')!r}, "
            f"not {issuer!r}: paste the provider's issuer exactly."
        )
    missing = [
        k for k in ("authorization_endpoint", "token_endpoint", "jwks_uri") if not document.get(k)
    ]
    if missing:
        raise SsoError(f"The discovery document lacks {', '.join(missing)}.")
    offered = document.get("id_token_signing_alg_values_supported") or ["RS256"]
    return Provider(
        issuer=issuer,
        authorization_endpoint=document["authorization_endpoint"],
        token_endpoint=document["token_endpoint"],
        jwks_uri=document["jwks_uri"],
        token_auth_methods=tuple(
            document.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        ),
        algorithms=tuple(a for a in offered if a in ALGORITHMS),
        scopes=tuple(str(s) for s in document.get("scopes_supported") or ()),
    )


def start(provider: Provider, *, client_id: str, redirect_uri: str, scope: str = SCOPE) -> Flow:
    """A fresh authorization request: its URL and the values the callback must match."""
    state, nonce, verifier = generate_token(32), generate_token(32), generate_token(64)
    url = prepare_grant_uri(
        provider.authorization_endpoint,
        client_id=client_id,
        response_type="code",
        redirect_uri=redirect_uri,
        scope=scope,
        state=state,
        nonce=nonce,
        code_challenge=create_s256_code_challenge(verifier),
        code_challenge_method="S256",
    )
    return Flow(state=state, nonce=nonce, code_verifier=verifier, url=url)


def exchange(
    provider: Provider,
    *,
    organization_id: int,
    client_id: str,
    client_secret: str,
    code: str,
    redirect_uri: str,
    code_verifier: str,
) -> dict:
    """The token response for an authorization code (RFC 6749 section 4.1.3)."""
    fields = {"redirect_uri": redirect_uri, "code_verifier": code_verifier}
    headers = {"accept": "application/json", "content-type": "application/x-www-form-urlencoded"}
    if client_secret and "client_secret_basic" in provider.token_auth_methods:
        pair = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}"
        headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    else:
        fields["client_id"] = client_id
        if client_secret:
            fields["client_secret"] = client_secret
    body = prepare_token_request("authorization_code", code=code, **fields)
    try:
        response = guarded_request_sync(
            "POST",
            provider.token_endpoint,
            organization_id=organization_id,
            headers=headers,
            content=body.encode(),
            timeout=TIMEOUT_SECONDS,
            max_bytes=MAX_DOCUMENT_BYTES,
            follow_redirects=False,
        )
    except OutboundError as exc:
        raise SsoError(f"Could not reach the provider's token endpoint: {exc}") from None
    try:
        answer = response.json()
    except ValueError:
        answer = {}
    if response.status_code != 200 or not isinstance(answer, dict):
        error = answer.get("error", response.status_code) if isinstance(answer, dict) else ""
        raise SsoError(f"The provider refused the code ({error}).")
    if not isinstance(answer.get("id_token"), str):
        raise SsoError("The provider's token response has no ID token.")
    return answer


def signing_keys(provider: Provider, *, organization_id: int) -> KeySet:
    """The provider's published keys (fetched for each sign-in: a rotated key is seen at once)."""
    jwks = _get_json(provider.jwks_uri, organization_id=organization_id, what="signing keys")
    try:
        return KeySet.import_key_set(jwks)  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        raise SsoError(f"The provider's signing keys are unreadable: {exc}") from None


def check_id_token(
    id_token: str,
    *,
    keys: KeySet,
    issuer: str,
    client_id: str,
    nonce: str,
    algorithms: tuple[str, ...] = ("RS256",),
    now: int | None = None,
) -> dict:
    """The ID token's claims once every check of OpenID Connect Core 3.1.3.7 that applies to
    the code flow passed (signature by one of `keys`, iss, aud, azp, exp, iat, nonce); SsoError
    naming the first that failed."""
    allowed = [a for a in algorithms if a in ALGORITHMS] or ["RS256"]
    try:
        token = jwt.decode(id_token, keys, algorithms=allowed)
    except (JoseError, ValueError, binascii.Error) as exc:
        raise SsoError(f"The ID token's signature does not verify: {exc}") from None
    claims = token.claims
    registry = jwt.JWTClaimsRegistry(
        now=now,
        leeway=LEEWAY_SECONDS,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": client_id},
        sub={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    try:
        registry.validate(claims)
    except JoseError as exc:
        raise SsoError(f"The ID token was refused: {exc}") from None
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if len(audiences) > 1 and claims.get("azp") != client_id:
        raise SsoError("The ID token is for several audiences and not authorized for this client.")
    return claims


def verify_id_token(
    id_token: str, *, provider: Provider, organization_id: int, client_id: str, nonce: str
) -> dict:
    """check_id_token against the provider's current keys and its issuer."""
    return check_id_token(
        id_token,
        keys=signing_keys(provider, organization_id=organization_id),
        issuer=provider.issuer,
        client_id=client_id,
        nonce=nonce,
        algorithms=provider.algorithms,
    )
