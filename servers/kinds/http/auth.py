"""Authenticating to the upstream API: bearer, apiKey, basic, and OAuth2 client credentials
(the token cached in Redis, encrypted, until shortly before it expires)."""

import base64
import hashlib
from typing import Any, cast

import orjson

from infra import keys
from mcp_protocol.context import RequestContext
from mcp_protocol.errors import ToolError
from servers.outbound import OutboundError, guarded_request

from .compiling import HttpTool
from .config import OAUTH_EXPIRY_MARGIN
from .request import Outbound, _scalar

# -- auth -----------------------------------------------------------------------------------------


async def apply_auth(
    tool: HttpTool,
    outbound: Outbound,
    variables: dict[str, Any],
    *,
    test: bool,
    refresh: bool = False,
) -> None:
    if not tool.auth:
        return
    auth = tool.render_auth(variables)
    kind = auth["type"]
    if kind == "bearer":
        token = _scalar(auth["token"])
        outbound.headers["Authorization"] = f"Bearer {token}"
        outbound.sensitive.append(token)
    elif kind == "apiKey":
        value = _scalar(auth["value"])
        if auth.get("in", "header") == "query":
            outbound.params.append((auth["name"], value))
        else:
            outbound.headers[auth["name"]] = value
        outbound.sensitive.append(value)
    elif kind == "basic":
        pair = f"{_scalar(auth['username'])}:{_scalar(auth.get('password', ''))}"
        encoded = base64.b64encode(pair.encode()).decode()
        outbound.headers["Authorization"] = f"Basic {encoded}"
        outbound.sensitive += [encoded, pair]
    elif kind == "oauth2":
        token = await oauth_token(tool, auth, test=test, refresh=refresh)
        outbound.headers["Authorization"] = f"Bearer {token}"
        outbound.sensitive.append(token)


def _oauth_cache_key(tool: HttpTool, auth: dict[str, Any], test: bool) -> str:
    material = orjson.dumps(
        [
            tool.organization_id,
            auth["tokenUrl"],
            auth["clientId"],
            hashlib.sha256(_scalar(auth["clientSecret"]).encode()).hexdigest(),
            auth.get("scope"),
            auth.get("audience"),
            test,
        ]
    )
    return keys.http_oauth_token(hashlib.sha256(material).hexdigest())


async def oauth_token(
    tool: HttpTool, auth: dict[str, Any], *, test: bool, refresh: bool = False
) -> str:
    from infra.redis import async_client
    from vault import crypto

    redis = async_client()
    key = _oauth_cache_key(tool, auth, test)
    if not refresh:
        cached = await redis.get(key)
        if cached:
            try:
                return crypto.decrypt(cast(bytes, cached).decode())
            except crypto.SecretUnreadable:
                pass
    client_id, client_secret = _scalar(auth["clientId"]), _scalar(auth["clientSecret"])
    form = {"grant_type": "client_credentials"}
    for name in ("scope", "audience"):
        if auth.get(name):
            form[name] = _scalar(auth[name])
    headers = {"Accept": "application/json"}
    if auth.get("clientAuth", "body") == "basic":
        pair = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
        headers["Authorization"] = f"Basic {pair}"
    else:
        form.update(client_id=client_id, client_secret=client_secret)
    try:
        response = await guarded_request(
            "POST",
            _scalar(auth["tokenUrl"]),
            organization_id=tool.organization_id,
            headers=headers,
            data=form,
            timeout=tool.timeout,
            max_bytes=64 * 1024,
        )
    except OutboundError as exc:
        raise ToolError(f"Could not get an OAuth token: {exc.message}") from None
    try:
        payload = response.json()
    except orjson.JSONDecodeError:
        payload = {}
    token = payload.get("access_token") if isinstance(payload, dict) else None
    if not isinstance(token, str) or not token:
        from vault.masking import Masker

        detail = payload.get("error") if isinstance(payload, dict) else None
        detail = f" ({detail[:100]})" if isinstance(detail, str) and detail else ""
        message = (
            f"The OAuth token endpoint answered {response.status_code} without an access token"
            f"{detail}: check the client credentials configured for this tool."
        )
        raise ToolError(Masker([client_id, client_secret]).mask(message))
    expires_in = payload.get("expires_in")
    ttl = int(expires_in) - OAUTH_EXPIRY_MARGIN if isinstance(expires_in, int | float) else 300
    if ttl > 0:
        await redis.set(key, crypto.encrypt(token), ex=ttl)
    return token


# -- connected accounts ---------------------------------------------------------------------------


async def apply_connection(
    tool: HttpTool, outbound: Outbound, ctx: RequestContext, *, stale: str = ""
) -> str:
    """The caller's token for the tool's `connection`, where the config places it; a caller
    without one is sent to connect (connections/need.py), which may end this call. `stale`:
    the token the API just refused, refreshed now. Returns the token sent."""
    from connections.need import token_or_consent

    if tool.organization_id is None:
        raise ToolError("A tool with a connection runs only on a server of an organization.")
    requirement = tool.connection
    token = await token_or_consent(
        ctx, organization_id=tool.organization_id, requirement=requirement, stale=stale
    )
    value = f"{requirement.prefix}{token.value}"
    if requirement.location == "query":
        outbound.params = [(k, v) for k, v in outbound.params if k != requirement.name]
        outbound.params.append((requirement.name, value))
    else:
        outbound.headers[requirement.name] = value
    outbound.sensitive += [token.value, value]
    if token.label not in ctx.connections_used:
        ctx.connections_used = (*ctx.connections_used, token.label)
    return token.value
