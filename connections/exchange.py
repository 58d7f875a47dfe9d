"""Talking to a provider's token endpoint: the authorization code exchange and the refresh,
built with authlib's OAuth 2.0 primitives (RFC 6749 request bodies, client authentication,
RFC 7636 PKCE) and sent through the SSRF guard (servers.outbound) like every outbound request."""

import base64
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import orjson
from authlib.oauth2.rfc6749.parameters import prepare_token_request

from servers.outbound import OutboundError, guarded_request

from .models import Provider

TOKEN_TIMEOUT = 15.0


class ProviderRefused(Exception):
    """The provider answered without tokens: `error` is its OAuth error code when it gave one
    (`invalid_grant`: the grant was revoked or the refresh token is spent)."""

    def __init__(self, message: str, error: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.error = error


@dataclass(frozen=True)
class Tokens:
    access_token: str
    refresh_token: str
    token_type: str
    scopes: list[str]
    expires_at: float | None  # epoch seconds


def _client_auth(provider: Provider, form: dict[str, str]) -> dict[str, str]:
    headers = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}
    secret = provider.client_secret()
    if provider.client_auth == "client_secret_basic" and secret:
        # RFC 6749 2.3.1: both parts form-encoded before the Basic encoding.
        pair = f"{quote(provider.client_id, safe='')}:{quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    else:
        form["client_id"] = provider.client_id
        if secret:
            form["client_secret"] = secret
    return headers


async def _post(provider: Provider, grant_type: str, **fields: str) -> Tokens:
    form: dict[str, str] = {}
    headers = _client_auth(provider, form)
    body = prepare_token_request(grant_type, **fields)
    for name, value in form.items():
        body += f"&{name}={quote(value, safe='')}"
    try:
        response = await guarded_request(
            "POST",
            provider.token_url,
            organization_id=provider.organization_id,
            headers=headers,
            content=body.encode(),
            timeout=TOKEN_TIMEOUT,
            max_bytes=256 * 1024,
        )
    except OutboundError as exc:
        raise ProviderRefused(f"{provider.name} could not be reached: {exc.message}") from None
    try:
        payload: Any = response.json()
    except orjson.JSONDecodeError:
        payload = {}
    if not isinstance(payload, dict):
        payload = {}
    token = payload.get("access_token")
    if response.status_code >= 400 or not isinstance(token, str) or not token:
        error = payload.get("error") if isinstance(payload.get("error"), str) else ""
        raise ProviderRefused(
            f"{provider.name} answered {response.status_code} without an access token"
            + (f" ({error[:100]})" if error else ""),
            error,
        )
    return _tokens(provider, payload)


def _tokens(provider: Provider, payload: dict[str, Any]) -> Tokens:
    expires_in = payload.get("expires_in")
    expires_at = time.time() + float(expires_in) if isinstance(expires_in, int | float) else None
    scope = payload.get("scope")
    scopes = split_scopes(scope) if isinstance(scope, str) else []
    refresh = payload.get("refresh_token")
    return Tokens(
        access_token=payload["access_token"],
        refresh_token=refresh if isinstance(refresh, str) else "",
        token_type=str(payload.get("token_type") or "Bearer"),
        scopes=scopes,
        expires_at=expires_at,
    )


def split_scopes(value: str) -> list[str]:
    return [s for s in value.replace(",", " ").split() if s]


async def exchange_code(
    provider: Provider, *, code: str, redirect_uri: str, code_verifier: str | None
) -> Tokens:
    fields = {"code": code, "redirect_uri": redirect_uri}
    if code_verifier:
        fields["code_verifier"] = code_verifier
    return await _post(provider, "authorization_code", **fields)


async def refresh(provider: Provider, *, refresh_token: str) -> Tokens:
    return await _post(provider, "refresh_token", refresh_token=refresh_token)
