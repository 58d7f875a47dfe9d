"""claude.ai, Claude Desktop (the same connector backend) and ChatGPT: they accept no pasted key,
only OAuth or no auth. Before the first call they follow the MCP authorization spec: a request
without a token, the 401's resource_metadata, the protected resource metadata, the authorization
server's metadata (RFC 8414, then OpenID discovery), registration (DCR, or a client metadata
document) and an authorization request with PKCE S256 that the browser opens."""

import base64
import hashlib
import re
import secrets
from urllib.parse import urlencode, urlsplit

from servers.models import accepts_oauth

from .header_clients import headers, initialize
from .probe import Exchange, Probe
from .report import FAIL, PASS, SKIP, WARN, Report, Step

FAMILY = "claude.ai, Claude Desktop, ChatGPT"
CALLBACK = "https://claude.ai/api/mcp/auth_callback"
RESOURCE_METADATA = re.compile(r'resource_metadata="([^"]+)"')
LATER = ("resource metadata", "authorization server metadata", "registration", "authorization")


def _step(name, status, detail, fix: str = "", exchange: Exchange | None = None) -> Step:
    return Step(
        FAMILY,
        name,
        status,
        detail,
        fix,
        request=exchange.request if exchange else "",
        response=exchange.response if exchange else "",
        elapsed_ms=exchange.elapsed_ms if exchange else None,
    )


async def run(report: Report, probe: Probe, url: str, *, auth_mode: str) -> None:
    if auth_mode == "none":
        report.add(_step("sign-in", PASS, "No auth: these clients connect without signing in."))
        return
    challenge = await initialize(probe, url, None, "2025-11-25")
    if not accepts_oauth(auth_mode):
        report.add(
            _step(
                "401 challenge",
                WARN,
                "This server takes API keys only: claude.ai, Claude Desktop and ChatGPT cannot "
                "send a key, so they cannot connect.",
                "Set the server's auth mode to 'oauth' or 'api_key+oauth' (Settings) to let "
                "them sign in; keys keep working with api_key+oauth.",
                challenge,
            )
        )
        return
    found = RESOURCE_METADATA.search(challenge.header("www-authenticate"))
    if challenge.status != 401 or not found:
        report.add(
            _step(
                "401 challenge",
                FAIL,
                f"Expected 401 with WWW-Authenticate resource_metadata, got {challenge.status}",
                "A proxy in front of getmcp may strip WWW-Authenticate or rewrite 401s: pass "
                "them through unchanged.",
                challenge,
            )
        )
        _skip_rest(report)
        return
    report.add(_step("401 challenge", PASS, "401 names the resource metadata", "", challenge))

    prm = await probe.send("GET", found.group(1), headers={"accept": "application/json"})
    document = prm.json() if prm.status == 200 else None
    servers = (document or {}).get("authorization_servers") or []
    if not isinstance(document, dict) or document.get("resource") != url or not servers:
        report.add(
            _step(
                "resource metadata",
                FAIL,
                f"{prm.status}: the document must name this URL as its resource and an "
                "authorization server",
                "SITE_URL must be the address clients use (the resource URI is built from it).",
                prm,
            )
        )
        _skip_rest(report, LATER[1:])
        return
    report.add(_step("resource metadata", PASS, f"authorization server {servers[0]}", "", prm))

    issuer = servers[0].rstrip("/")
    metadata, exchange = await _authorization_server_metadata(probe, issuer)
    if metadata is None:
        report.add(
            _step(
                "authorization server metadata",
                FAIL,
                "No metadata at the RFC 8414 or OpenID discovery URLs of the issuer",
                "Check OAUTH_ISSUER (empty: SITE_URL) and that /.well-known/ reaches getmcp.",
                exchange,
            )
        )
        _skip_rest(report, LATER[2:])
        return
    pkce = "S256" in (metadata.get("code_challenge_methods_supported") or [])
    report.add(
        _step(
            "authorization server metadata",
            PASS if pkce and metadata.get("issuer") == issuer else FAIL,
            f"issuer {metadata.get('issuer')}; PKCE S256 {'supported' if pkce else 'MISSING'}",
            "" if pkce else "These clients refuse an authorization server without PKCE S256.",
            exchange,
        )
    )
    client_id, exchange = await _register(probe, metadata)
    if client_id is None:
        report.add(
            _step(
                "registration",
                FAIL,
                "Dynamic client registration did not give a client_id",
                "claude.ai and ChatGPT register on every connect; see the response.",
                exchange,
            )
        )
        _skip_rest(report, LATER[3:])
        return
    cimd = metadata.get("client_id_metadata_document_supported") is True
    report.add(
        _step(
            "registration",
            PASS,
            "Dynamic registration works"
            + ("; client metadata documents are accepted too" if cimd else ""),
            "",
            exchange,
        )
    )
    await _authorization(report, probe, metadata, client_id, url)


async def _authorization_server_metadata(probe: Probe, issuer: str):
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    # The MCP spec's order (2025-11-25, "Authorization Server Metadata Discovery").
    candidates = (
        [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
        if path
        else [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    )
    exchange = None
    for candidate in candidates:
        exchange = await probe.send("GET", candidate, headers={"accept": "application/json"})
        document = exchange.json() if exchange.status == 200 else None
        if isinstance(document, dict) and document.get("authorization_endpoint"):
            return document, exchange
    return None, exchange


async def _register(probe: Probe, metadata: dict):
    endpoint = metadata.get("registration_endpoint")
    if not endpoint:
        return None, None
    exchange = await probe.send(
        "POST",
        endpoint,
        headers={"content-type": "application/json", "accept": "application/json"},
        json={
            "client_name": "getmcp doctor (as claude.ai)",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
        },
    )
    body = exchange.json() if exchange.status == 201 else None
    return (body or {}).get("client_id") if isinstance(body, dict) else None, exchange


async def _authorization(report, probe, metadata, client_id, url) -> None:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "state": secrets.token_urlsafe(8),
        "code_challenge": challenge.rstrip(b"=").decode(),
        "code_challenge_method": "S256",
        "resource": url,
        "scope": "mcp offline_access",
    }
    endpoint = metadata["authorization_endpoint"]
    exchange = await probe.send("GET", f"{endpoint}?{urlencode(query)}", headers=headers(None))
    location = exchange.header("location")
    # Signed out, a valid request goes to the login page; an invalid one back to the client.
    to_login = exchange.status == 302 and "error=" not in location
    report.add(
        _step(
            "authorization",
            PASS if to_login else FAIL,
            "The browser step starts: sign in, then consent"
            if to_login
            else f"{exchange.status}: the authorization request was refused",
            "" if to_login else "See the error in the response (resource must be this URL).",
            exchange,
        )
    )


def _skip_rest(report: Report, names=LATER) -> None:
    for name in names:
        report.add(_step(name, SKIP, "an earlier step failed"))
