"""A tool call that needs the caller's connection: the token when there is one, else the
person is sent to connect.

- A client that declared URL elicitation (`capabilities.elicitation.url`) is asked with
  `elicitation/create` in `mode: "url"`: in a session (2025-11-25) the request travels on the
  call's stream and, once the connection is stored, `notifications/elicitation/complete`
  follows; in the stateless era (2026-07-28) the same request ends the round as
  `input_required`, and the client's retry (its answer in `inputResponses`) finds the
  connection. Either way the call then goes on with the new token.
- Any other client gets a tool error (`isError`) with the link and a sentence a person can act
  on; calling the tool again after connecting succeeds.

The link (`/connections/connect/<elicitationId>`) names nobody: the page looks the id up, and
requires the person it was made for to be signed in (flow.py).
"""

import secrets
import time
from typing import Any

import orjson
from django.conf import settings
from django.urls import reverse

from infra import keys
from infra.redis import async_client
from mcp_protocol.context import RequestContext
from mcp_protocol.errors import ToolError

from .requirement import Requirement
from .tokens import ConnectionNeeded, ConnectionUnavailable, Token, token_for

LINK_SECONDS = 900
# A link shown again keeps at least this long to be opened and followed.
REUSE_MIN_SECONDS = 300
# How long a call waits, after the client said the person went to the link, for the connection.
WAIT_SECONDS = 120.0


def supports_url_elicitation(ctx: RequestContext) -> bool:
    elicitation = ctx.client_capabilities.get("elicitation")
    return isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict)


async def make_link(ctx: RequestContext, need: ConnectionNeeded) -> tuple[str, str]:
    """(elicitationId, URL) of a page that connects this person to the provider.

    A call that runs again before the person connected (a task re-run after its input came, a
    stateless retry carrying the answer) gets the link it showed before, so the completion
    notice names the elicitation the client saw; a link close to expiry is replaced."""
    redis = async_client()
    user_id = ctx.caller.principal_id
    organization_id = need.provider.organization_id
    last = keys.connect_link(
        organization_id, user_id or 0, need.provider.pk, " ".join(sorted(need.scopes))
    )
    previous = await redis.get(last)
    if previous:
        elicitation_id = previous.decode() if isinstance(previous, bytes) else str(previous)
        if await redis.ttl(keys.connect_elicitation(elicitation_id)) > REUSE_MIN_SECONDS:
            return elicitation_id, _url(elicitation_id)
    elicitation_id = secrets.token_urlsafe(24)
    record = {
        "user": user_id,
        "organization": organization_id,
        "provider": need.provider.pk,
        "scopes": need.scopes,
    }
    await redis.set(keys.connect_elicitation(elicitation_id), orjson.dumps(record), ex=LINK_SECONDS)
    await redis.set(last, elicitation_id, ex=LINK_SECONDS)
    return elicitation_id, _url(elicitation_id)


def _url(elicitation_id: str) -> str:
    return settings.SITE_URL.rstrip("/") + reverse("connections:connect", args=[elicitation_id])


def _message(need: ConnectionNeeded) -> str:
    name = need.provider.name
    if need.reason == "not connected":
        return f"This tool acts on your {name} account. Connect {name} to getmcp to continue."
    if need.reason.startswith("missing scopes"):
        return f"This tool needs more access to your {name} account ({need.reason}). Connect again to continue."
    return f"Your {name} connection needs your consent again ({need.reason}). Connect again to continue."


async def wait_for_connection(
    organization_id: int, user_id: int, provider_key: str, deadline: float
) -> None:
    """Until the person's connection is stored or the deadline passes (a push from storing)."""
    redis = async_client()
    ready = keys.connection_ready(organization_id, user_id, provider_key)
    remaining = deadline - time.monotonic()
    if remaining > 0:
        await redis.blpop([ready], timeout=max(1, int(min(remaining, 5))))


async def token_or_consent(
    ctx: RequestContext, *, organization_id: int, requirement: Requirement, stale: str = ""
) -> Token:
    try:
        return await token_for(
            caller=ctx.caller, organization_id=organization_id, requirement=requirement, stale=stale
        )
    except ConnectionUnavailable as exc:
        raise ToolError(str(exc)) from None
    except ConnectionNeeded as need:
        first = need
    elicitation_id, url = await make_link(ctx, first)
    message = _message(first)
    if not supports_url_elicitation(ctx):
        raise ToolError(
            f"{message} Open this link in a browser where you are signed in to getmcp, approve "
            f"the access, then call the tool again: {url}",
            structured_content={"connectionRequired": {"provider": first.provider.key, "url": url}},
        )
    answer = await ctx.request(
        f"connect:{first.provider.key}",
        "elicitation/create",
        {"mode": "url", "elicitationId": elicitation_id, "url": url, "message": message},
    )
    if answer.get("action") != "accept":
        raise ToolError(
            f"The {first.provider.name} connection was {answer.get('action') or 'not made'}: the "
            f"tool cannot act on your account without it. To connect later, open {url}"
        )
    deadline = time.monotonic() + WAIT_SECONDS
    user_id = ctx.caller.principal_id
    assert user_id is not None  # per-user needs come only for people (tokens.token_for)
    while True:
        try:
            token = await token_for(
                caller=ctx.caller, organization_id=organization_id, requirement=requirement
            )
        except ConnectionNeeded:
            if time.monotonic() >= deadline:
                raise ToolError(
                    f"The {first.provider.name} connection was not completed in time. Open {url} "
                    "to connect, then call the tool again."
                ) from None
            await wait_for_connection(organization_id, user_id, first.provider.key, deadline)
            continue
        except ConnectionUnavailable as exc:
            raise ToolError(str(exc)) from None
        await ctx.notify("notifications/elicitation/complete", {"elicitationId": elicitation_id})
        return token


def describe(token: Token) -> dict[str, Any]:
    return {"provider": token.provider, "connection": token.connection_id}
