"""The one way a stage of the pipeline stops a request: `Refused`, carrying the HTTP answer.

The transports frame it (JSON-RPC error body, Webtools' error object, a legacy stream's event);
the stages only decide it. `reason` names why in a word the live inspector shows
(inspector/events.py REASONS); it never reaches the client."""

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
