"""The one way a stage of the pipeline stops a request: `Refused`, carrying the HTTP answer.

The transports frame it (JSON-RPC error body, Webtools' error object, a legacy stream's event);
the stages only decide it. `reason` names why in a word the live inspector shows
(inspector/events.py REASONS); it never reaches the client.

Authentication decides a `Denied` (why, and what the answer may show); `refusal` turns it into
its answer from one table, `ANSWERS`, so every refusal of admission is written in one place."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from mcp_protocol import errors
from mcp_protocol.errors import McpError
from servers.models import accepts_oauth
from servers.snapshot import Snapshot

Headers = list[tuple[str, str]]

SCOPE_FULL = "mcp"
# What a token with only mcp:read may not do: run tools (directly or as tasks).
FULL_SCOPE_METHODS = frozenset({"tools/call", "tasks/create"})


class Refused(Exception):
    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        headers: Any = (),
        request_id: Any = None,
        *,
        reason: str = "",
        data: Any = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = McpError(code, message, data)
        self.headers: Headers = list(headers)
        self.request_id = request_id
        self.reason = reason
        # Whether the request's Origin had passed the server's check when it was refused: only
        # then may the answer carry CORS headers.
        self.origin_ok = False
        # The server the request reached, when it was refused after the server was known: the
        # live inspector shows the refusal to its owner.
        self.snapshot: Snapshot | None = None
        self.watched = False  # and whether its owner has its live inspector open

    def body(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.request_id, "error": self.error.to_dict()}


def resource_metadata_url(slug: str) -> str:
    return f"{settings.SITE_URL.rstrip('/')}/.well-known/oauth-protected-resource/mcp/{slug}"


def unauthorized(
    snapshot: Snapshot | None,
    message: str,
    error: str | None = None,
    *,
    reason: str = "unauthorized",
) -> Refused:
    """THE 401 of the endpoint. A server that takes OAuth names its protected resource metadata
    and the scope to ask for (RFC 9728 §5.1, MCP authorization); one that takes only keys
    does not, so header-only clients are never steered into a browser flow."""
    params = ['realm="getmcp"']
    if error:
        params.append(f'error="{error}"')
    if snapshot is not None and accepts_oauth(snapshot.auth_mode):
        params.append(f'resource_metadata="{resource_metadata_url(snapshot.slug)}"')
        params.append(f'scope="{SCOPE_FULL}"')
    return Refused(
        401,
        errors.INVALID_REQUEST,
        message,
        [("www-authenticate", "Bearer " + ", ".join(params))],
        reason=reason,
    )


def bad_api_key(message: str, *, reason: str) -> Refused:
    """The answer to a key-shaped credential (gmcp_..., not an access token) that is not a
    usable key, on every slug alike (so it tells nothing about the server).

    403, not 401: the TypeScript SDK (and mcp-remote, built on it) answers every 401 by
    starting OAuth when it has an auth provider, with or without resource_metadata in the
    header: discovery finds this deployment's authorization server and opens a browser login,
    while the person only mistyped a key. A 403 without `insufficient_scope` is reported as it
    is, body included; its WWW-Authenticate names the error and invites no OAuth flow."""
    return Refused(
        403,
        errors.INVALID_REQUEST,
        message,
        [
            (
                "www-authenticate",
                f'Bearer realm="getmcp", error="invalid_token", error_description="{message}"',
            )
        ],
        reason=reason,
    )


# -- the refusals of authentication, by why ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Denied:
    """Why authentication refuses a request, before its answer is written (`refusal`)."""

    why: str  # a row of ANSWERS
    # The live server the request reached: its owner's inspector shows the refusal, and a 401
    # names its OAuth metadata when it takes OAuth. None for a slug with no live server.
    snapshot: Snapshot | None = None
    origin_ok: bool = False  # the Origin had passed: the answer may carry CORS headers
    watched: bool = False
    detail: str = ""  # why a key is suspended


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    message: str
    # "bearer": THE 401 (`unauthorized`); "key": the 403 of a key-shaped credential
    # (`bad_api_key`); "": no challenge.
    challenge: str = ""
    error: str | None = None  # the 401's error parameter
    reason: str = ""  # what the inspector shows, when it is not the row's name
    code: int = errors.INVALID_REQUEST
    headers: tuple[tuple[str, str], ...] = ()


INVALID_TOKEN = "invalid_token"
# A draft's answer to its own organization: Forbidden, not Not Found (the server exists for this
# caller, and a client that sees 404 on a session-era request may take it for an expired session
# and start over in a loop).
DRAFT_STATUS = 403

# In the order authentication checks them (which refusal a request gets when several apply):
# Host, the server (unknown, draft, broken definition), Origin, the credential, paused.
ANSWERS: dict[str, Answer] = {
    "host_refused": Answer(400, "Invalid Host header"),
    "unknown_server": Answer(404, "Unknown MCP server"),
    # The message is the draft's own (`draft_message`).
    "draft": Answer(DRAFT_STATUS, ""),
    "broken_definition": Answer(
        503, "This MCP server's definition is invalid", code=errors.INTERNAL_ERROR
    ),
    "origin_refused": Answer(403, "Origin not allowed"),
    "missing_key": Answer(
        401, "Authentication required: send Authorization: Bearer <key>", "bearer"
    ),
    # A key-shaped token (credentials.is_api_key_shaped) is answered as a key, else as a token.
    "unknown_key": Answer(403, "Invalid API key", "key"),
    "unknown_token": Answer(
        401, "Invalid API key or access token", "bearer", INVALID_TOKEN, reason="unknown_key"
    ),
    # Only API keys are suspended (a grant of someone who left is revoked).
    "suspended_key": Answer(403, "API key suspended: {detail}", "key"),
    "revoked_key": Answer(403, "API key revoked or expired", "key"),
    "revoked_token": Answer(
        401,
        "API key or access token revoked or expired",
        "bearer",
        INVALID_TOKEN,
        reason="revoked_key",
    ),
    "token_for_other_server": Answer(
        401, "This access token is not for this server", "bearer", INVALID_TOKEN
    ),
    "api_keys_not_accepted": Answer(
        401, "This server does not accept API keys", "bearer", INVALID_TOKEN
    ),
    # Another organization's key learns nothing, not even that the server exists.
    "key_of_other_organization": Answer(404, "Unknown MCP server"),
    "key_limited_to_other_servers": Answer(403, "This API key is not allowed to use this server"),
    "paused": Answer(
        503,
        "This MCP server is paused",
        code=errors.INTERNAL_ERROR,
        headers=(("retry-after", "60"),),
    ),
}


def refusal(denied: Denied, slug: str) -> Refused:
    answer = ANSWERS[denied.why]
    reason = answer.reason or denied.why
    message = answer.message.format(detail=denied.detail)
    if answer.challenge == "bearer":
        refused = unauthorized(denied.snapshot, message, answer.error, reason=reason)
    elif answer.challenge == "key":
        refused = bad_api_key(message, reason=reason)
    elif denied.why == "draft":
        refused = Refused(
            answer.status,
            answer.code,
            draft_message(slug),
            reason=reason,
            data=draft_error_data(slug),
        )
    else:
        refused = Refused(answer.status, answer.code, message, answer.headers, reason=reason)
    refused.snapshot = denied.snapshot
    refused.origin_ok = denied.origin_ok
    refused.watched = denied.watched
    return refused


# -- drafts --------------------------------------------------------------------------------------
# A draft is served to nobody, and to outsiders it looks exactly like a slug with no server (the
# uniform 404, so nobody learns that it exists). Its own organization's keys, and OAuth tokens
# issued for it, get a JSON-RPC error that says it is a draft and where to switch it on
# (credentials.owns_draft): otherwise a client cannot tell a draft from a typo in the URL.
# Everything needed is in the compiled snapshot and the credential the gate already holds, so
# this adds no SQL and no Redis round trip.


def activate_url(slug: str) -> str:
    return f"{settings.SITE_URL.rstrip('/')}/servers/{slug}/"


def draft_message(slug: str) -> str:
    return (
        f"MCP server {slug!r} is a draft: it answers no client until it is activated. "
        f"Set its status to Active on {activate_url(slug)} "
        f'(or PATCH /api/servers/{slug}/ with {{"status": "active"}}).'
    )


def draft_error_data(slug: str) -> dict[str, str]:
    return {"status": "draft", "activateUrl": activate_url(slug)}
