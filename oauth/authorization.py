"""The authorization endpoint's rules: which requests may be shown to the user, which errors go
back to the client's redirect URI, and the code handed out after consent.

Before the client and its redirect URI are verified nothing is sent to that URI (RFC 6749
§4.1.2.1): those errors are shown to the user instead.
"""

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from servers.models import Server, accepts_oauth

from . import metadata, redirects
from .clients import client_resolve
from .errors import OAuthError
from .models import SCOPE_MCP, SCOPES, AuthorizationCode, Client, Grant, digest_token

CODE_PREFIX = "gmcp_ac_"
PKCE_RE = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")


class RedirectError(OAuthError):
    """An error for a verified client: sent to its redirect URI with state and iss."""

    def __init__(self, error, description, *, redirect_uri, state) -> None:
        super().__init__(error, description)
        self.redirect_uri = redirect_uri
        self.state = state

    def location(self) -> str:
        return redirect_with(self.redirect_uri, {**self.as_dict(), "state": self.state})


@dataclass
class AuthorizationRequest:
    client: Client
    redirect_uri: str
    state: str | None
    code_challenge: str
    resource: str
    server: Server
    scopes: list[str] = field(default_factory=list)

    @property
    def scope(self) -> str:
        return " ".join(self.scopes)

    def scope_descriptions(self) -> list[tuple[str, str]]:
        return [(s, SCOPES[s]) for s in self.scopes]


def redirect_with(uri: str, params: dict) -> str:
    """The redirect URI with the response parameters added to its query (plus iss, RFC 9207).
    Raises ValueError for a URI that did not pass redirects.problem: nothing else is a target."""
    params = {k: v for k, v in params.items() if v is not None}
    params["iss"] = metadata.issuer()
    return redirects.with_params(uri, params)


def _one(params, name: str) -> str | None:
    values = params.getlist(name) if hasattr(params, "getlist") else [params.get(name)]
    values = [v for v in values if v is not None]
    if len(values) > 1:
        raise OAuthError("invalid_request", f"{name} was given more than once")
    return values[0] if values else None


def server_for_resource(resource: str | None) -> Server | None:
    """The OAuth-enabled server whose canonical URI is `resource`, else None."""
    slug = metadata.slug_of_resource(resource)
    if not slug:
        return None
    server = Server.objects.select_related("organization").filter(slug=slug).first()
    if server is None or server.status == Server.DRAFT or not accepts_oauth(server.auth_mode):
        return None
    return server


def choose_scopes(requested: str | None) -> list[str]:
    """Known scopes asked for, in a stable order; unknown ones are ignored (RFC 6749 §3.3)."""
    asked = (requested or "").split()
    chosen = [s for s in SCOPES if s in asked]
    if not any(s in chosen for s in (SCOPE_MCP, "mcp:read")):
        chosen.insert(0, SCOPE_MCP)
    return chosen


def authorization_request_parse(*, params) -> AuthorizationRequest:
    client = client_resolve(client_id=_one(params, "client_id") or "")
    redirect_uri = _one(params, "redirect_uri")
    if redirect_uri is None:
        if len(client.redirect_uris) != 1:
            raise OAuthError("invalid_request", "redirect_uri is required")
        redirect_uri = client.redirect_uris[0]
    # Checked before anything is sent to it: these errors are shown, never redirected.
    why = redirects.problem(redirect_uri)
    if why:
        raise OAuthError("invalid_request", f"redirect_uri {why}")
    if not redirects.matches(redirect_uri, client.redirect_uris):
        raise OAuthError("invalid_request", "redirect_uri is not registered for this client")
    state = _one(params, "state")

    def fail(error, description):
        return RedirectError(error, description, redirect_uri=redirect_uri, state=state)

    try:
        response_type = _one(params, "response_type")
        challenge = _one(params, "code_challenge")
        method = _one(params, "code_challenge_method")
        resource = _one(params, "resource")
        scope = _one(params, "scope")
    except OAuthError as exc:
        raise fail(exc.error, exc.description) from None
    if response_type != "code":
        raise fail("unsupported_response_type", "Only response_type=code is supported")
    if not challenge:
        raise fail("invalid_request", "PKCE is required: send code_challenge (S256)")
    if method != "S256":
        raise fail("invalid_request", "code_challenge_method must be S256")
    if not PKCE_RE.match(challenge):
        raise fail("invalid_request", "code_challenge is malformed")
    if not resource:
        raise fail("invalid_target", "resource is required: the MCP server's URL (RFC 8707)")
    server = server_for_resource(resource)
    if server is None:
        raise fail("invalid_target", "resource is not an MCP server that accepts OAuth here")
    return AuthorizationRequest(
        client=client,
        redirect_uri=redirect_uri,
        state=state,
        code_challenge=challenge,
        resource=metadata.resource_uri(server.slug),
        server=server,
        scopes=choose_scopes(scope),
    )


def code_issue(*, grant: Grant, request: AuthorizationRequest) -> str:
    raw = CODE_PREFIX + secrets.token_urlsafe(32)
    AuthorizationCode.objects.create(
        digest=digest_token(raw),
        grant=grant,
        redirect_uri=request.redirect_uri,
        code_challenge=request.code_challenge,
        expires_at=timezone.now() + timedelta(seconds=settings.OAUTH_CODE_SECONDS),
    )
    return raw


def pkce_matches(*, verifier: str | None, challenge: str) -> bool:
    if not verifier or not PKCE_RE.match(verifier):
        return False
    computed = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return secrets.compare_digest(computed.decode(), challenge)
