"""Everything a request to /mcp/<slug> must pass before a method runs, in one place: Host,
server status, Origin, the API key and its organization, the protocol version header and the
session binding. No Redis round trip on a warm path (gateway/endpoint/mirror.py), and no SQL.

Over 400 lines on purpose: the checks run in one order that is part of the contract (which
refusal a request gets when several apply), so they read top to bottom in one file; each check's
rule lives elsewhere (servers/access.py, servers/quotas.py, auth.py, mirror.py)."""

import asyncio
import time
from collections.abc import Coroutine, Iterable
from typing import Any

from django.conf import settings
from redis.asyncio import Redis

from infra import keys as rkeys
from infra.redis import async_client
from mcp_protocol import errors, versions
from mcp_protocol.errors import McpError
from servers import access, quotas
from servers.models import accepts_api_key, accepts_oauth
from servers.snapshot import DefinitionError, Snapshot, get_snapshot

from . import auth, drafts, usage
from .context import SessionContext
from .hosts import host_allowed, origin_allowed
from .http import Headers, HttpRequest, Send, respond_json
from .mirror import mirror
from .sessions import Session

CORS_ALLOW_HEADERS = (
    "content-type, authorization, mcp-session-id, mcp-protocol-version, last-event-id, "
    "mcp-method, mcp-name"
)
CORS_EXPOSE_HEADERS = "mcp-session-id, www-authenticate"
BACKGROUND: set[asyncio.Task[Any]] = set()


def session_header(req: HttpRequest) -> str | None:
    sid = req.header("mcp-session-id")
    return sid or None


class Refused(Exception):
    """The request stops here with an HTTP error. `reason` names why in a word the live
    inspector shows (inspector/events.py REASONS); it never reaches the client."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        headers: Headers = (),
        request_id: Any = None,
        *,
        reason: str = "",
        data: Any = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = McpError(code, message, data)
        self.headers = list(headers)
        self.request_id = request_id
        self.reason = reason

    async def send(self, send: Send, extra_headers: Headers = ()) -> None:
        body = {"jsonrpc": "2.0", "id": self.request_id, "error": self.error.to_dict()}
        await respond_json(send, self.status, body, [*self.headers, *extra_headers])


class Gate:
    __slots__ = (
        "request",
        "redis",
        "slug",
        "version",
        "snapshot",
        "credential",
        "session_id",
        "session",
        "origin",
        "origin_ok",
        "background",
        "watched",
    )

    request: HttpRequest
    redis: Redis
    slug: str
    version: str | None
    # Set by admit(): the server as this credential sees it (None until admitted).
    snapshot: Snapshot | None
    credential: auth.Credential
    session_id: str | None
    session: Session | None
    origin: str | None
    origin_ok: bool
    background: set[asyncio.Task[Any]]
    watched: bool

    def __init__(self, request: HttpRequest, slug: str, version: str | None = None) -> None:
        self.request = request
        self.slug = slug
        self.version = version
        self.redis = async_client()
        self.snapshot = None
        self.credential = auth.ANONYMOUS
        self.session_id = session_header(request)
        self.session = None
        self.origin = request.header("origin")
        # Whether a refusal may carry CORS headers (the Origin passed the server's check).
        self.origin_ok = False
        self.background = BACKGROUND
        self.watched = False  # someone has this server's live inspector open

    def cors_headers(self) -> list[tuple[str, str]]:
        if not self.origin:
            return []
        return [
            ("access-control-allow-origin", self.origin),
            ("access-control-expose-headers", CORS_EXPOSE_HEADERS),
            ("vary", "origin"),
        ]

    def context(self, request: Any, writer: Any) -> SessionContext:
        assert self.session is not None  # only a session-era request with its session asks
        return SessionContext(
            redis=self.redis,
            session=self.session,
            request_id=request.id,
            params=request.params,
            credential=self.credential.ident,
            writer=writer,
            client_headers=self.request.headers,
        )

    async def admit(self, *, preflight: bool = False) -> None:
        """Raises Refused with the HTTP answer when the request may not go on."""
        req = self.request
        host = req.header("host", "")
        if not host_allowed(host):
            raise Refused(400, errors.INVALID_REQUEST, "Invalid Host header", reason="host_refused")

        token = auth.bearer_token(req.header("authorization"))
        digest = auth.digest(token) if token else None
        cached = auth.cache.get(digest) if digest else None
        key_digest = auth.generation_digest(digest) if digest and cached is not None else None
        sid = self.session_id if not preflight else None
        states = mirror()
        state = states.lookup(self.slug, key_digest, sid)
        if state is None:
            state = await states.read(self.redis, self.slug, key_digest, sid)
        server_generation = state.server_generation
        key_generation = state.key_generation
        session_data = state.session
        self.watched = state.watched

        try:
            snapshot = await get_snapshot(self.slug, server_generation, self.version)
        except DefinitionError:
            # A stored definition that no longer compiles: the owner has to fix it. Only a
            # caller with a valid key learns it (its organization is unknown without the
            # definition); everyone else gets the answer of a protected server.
            if await self._refuse_as_protected(
                token, digest, cached, key_generation, host, preflight
            ):
                return
            raise Refused(
                503,
                errors.INTERNAL_ERROR,
                "This MCP server's definition is invalid",
                reason="broken_definition",
            ) from None
        if snapshot is None or snapshot.status == "draft":
            if await self._refuse_as_protected(
                token, digest, cached, key_generation, host, preflight
            ):
                return
            if snapshot is not None and drafts.owns(self.credential, snapshot):
                raise Refused(
                    drafts.DRAFT_STATUS,
                    drafts.CODE,
                    drafts.draft_message(self.slug),
                    reason="draft",
                    data=drafts.draft_error_data(self.slug),
                )
            raise Refused(
                404, errors.INVALID_REQUEST, "Unknown MCP server", reason="unknown_server"
            )
        self.snapshot = snapshot  # before the Origin check: its refusal is the server's to see
        if self.origin and not origin_allowed(self.origin, host, snapshot.allowed_origins):
            raise Refused(
                403, errors.INVALID_REQUEST, "Origin not allowed", reason="origin_refused"
            )
        self.origin_ok = True
        if preflight:
            return

        if snapshot.auth_mode != "none":
            # Before the status: an outsider must not learn that a server is paused.
            self.credential = await self._authenticate(token, digest, cached, key_generation)
        if snapshot.status == "paused":
            raise Refused(
                503,
                errors.INTERNAL_ERROR,
                "This MCP server is paused",
                [("retry-after", "60")],
                reason="paused",
            )
        self.snapshot = access.scoped(snapshot, self.credential)

        if snapshot.rate_limit_per_minute:
            await self._count_against_limit()

        if session_data:
            assert self.session_id is not None  # the mirror found session data under it
            session = Session.from_hash(self.session_id, session_data)
            if (
                session is not None
                and session.server_id == snapshot.server_id
                and session.credential == self.credential.ident
            ):
                self.session = session

    def check_protocol_version_header(self) -> None:
        """For GET and DELETE; a POST checks it after choosing its era, so a stateless request
        gets the error its era defines (with its id)."""
        header_version = self.request.header("mcp-protocol-version")
        if header_version and not versions.is_supported(header_version):
            raise Refused(
                400,
                errors.INVALID_REQUEST,
                f"Unsupported MCP-Protocol-Version: {header_version}",
                reason="unsupported_protocol_version",
            )

    async def charge(self, parsed: Any) -> None:
        """Count the tool calls of a request (a parsed body, or tool names) against the quotas
        and limits that apply (servers/quotas.py); 429 with Retry-After when one is over."""
        try:
            await quotas.charge(
                self.redis, self.snapshot, self.credential, quotas.tool_calls(parsed)
            )
        except quotas.OverLimit as over:
            retry = [("retry-after", str(over.retry_after))]
            request_id = getattr(parsed, "id", None)
            raise Refused(
                429, quotas.RATE_LIMITED, over.message, retry, request_id, reason="rate_limited"
            ) from None

    async def _count_against_limit(self) -> None:
        """The server's rate limit: a window per server and credential in Redis, so neither a
        reconnect nor another worker resets it (the rule and its counter: servers/quotas.py)."""
        try:
            await quotas.charge_request(self.redis, self.snapshot, self.credential)
        except quotas.OverLimit as over:
            raise Refused(
                429,
                errors.SERVER_ERROR,
                over.message,
                [("retry-after", str(over.retry_after))],
                reason="rate_limited",
            ) from None

    async def _refuse_as_protected(
        self,
        token: str | None,
        digest: str | None,
        cached: auth.Credential | None,
        key_generation: str | None,
        host: str,
        preflight: bool,
    ) -> bool:
        """For a slug with no live server behind it (unknown, draft, or broken): the same answer
        a protected server gives the same caller, so an outsider cannot tell them apart.
        Returns True for a preflight whose Origin a server without extra origins would accept
        (answered 204 like any), False for a caller with a valid key (who then learns what is
        wrong, kept in self.credential); raises the refusal for everyone else."""
        if self.origin and not origin_allowed(self.origin, host, ()):
            raise Refused(
                403, errors.INVALID_REQUEST, "Origin not allowed", reason="origin_refused"
            )
        self.origin_ok = True
        if preflight:
            return True
        # Kept for the caller: a draft tells its own organization's keys what it is.
        self.credential = await self._valid_credential(token, digest, cached, key_generation, None)
        return False

    async def _valid_credential(
        self,
        token: str | None,
        digest: str | None,
        cached: auth.Credential | None,
        key_generation: str | None,
        snapshot: Snapshot | None,
    ) -> auth.Credential:
        """A known, usable key or access token, else THE 401 (naming the OAuth metadata only
        for a live server that takes OAuth)."""
        if token is None:
            raise unauthorized(
                snapshot,
                "Authentication required: send Authorization: Bearer <key>",
                reason="missing_key",
            )
        credential: auth.Credential | None
        if cached is not None and cached.generation == key_generation:
            credential = cached
        else:
            assert digest is not None  # a token has a digest
            credential = await auth.load_credential(self.redis, digest)
        if credential is None:
            if auth.is_api_key_shaped(token):
                raise bad_api_key("Invalid API key", reason="unknown_key")
            raise unauthorized(
                snapshot, "Invalid API key or access token", "invalid_token", reason="unknown_key"
            )
        if credential.suspended:
            # Only API keys are suspended (a grant of someone who left is revoked).
            raise bad_api_key(f"API key suspended: {credential.suspended}", reason="suspended_key")
        if not credential.usable(time.time()):
            if auth.is_api_key_shaped(token):
                raise bad_api_key("API key revoked or expired", reason="revoked_key")
            raise unauthorized(
                snapshot,
                "API key or access token revoked or expired",
                "invalid_token",
                reason="revoked_key",
            )
        return credential

    async def _authenticate(
        self,
        token: str | None,
        digest: str | None,
        cached: auth.Credential | None,
        key_generation: str | None,
    ) -> auth.Credential:
        snapshot = self.snapshot
        assert snapshot is not None  # admit() sets it before authenticating
        credential = await self._valid_credential(token, digest, cached, key_generation, snapshot)
        if credential.is_oauth:
            # An access token is for one server only (its audience, RFC 8707): elsewhere it is
            # simply not a valid token, whichever organization owns the other server.
            if credential.audience_server_id != snapshot.server_id or not accepts_oauth(
                snapshot.auth_mode
            ):
                raise unauthorized(
                    snapshot,
                    "This access token is not for this server",
                    "invalid_token",
                    reason="token_for_other_server",
                )
            assert credential.grant_id is not None  # is_oauth
            usage.touch(credential.grant_id, rkeys.GRANT_USAGE)
            return credential
        if not accepts_api_key(snapshot.auth_mode):
            raise unauthorized(
                snapshot,
                "This server does not accept API keys",
                "invalid_token",
                reason="api_keys_not_accepted",
            )
        if credential.organization_id != snapshot.organization_id:
            # Another organization's key learns nothing, not even that the server exists.
            raise Refused(
                404,
                errors.INVALID_REQUEST,
                "Unknown MCP server",
                reason="key_of_other_organization",
            )
        if credential.server_ids and snapshot.server_id not in credential.server_ids:
            raise Refused(
                403,
                errors.INVALID_REQUEST,
                "This API key is not allowed to use this server",
                reason="key_limited_to_other_servers",
            )
        assert credential.key_id is not None  # a loaded API key
        usage.touch(credential.key_id)
        return credential

    def require_scope(self, methods: Iterable[str]) -> None:
        """Step-up (MCP 2025-11-25, RFC 6750 §3.1): a token limited to reading may not call."""
        credential = self.credential
        if not credential.is_oauth or SCOPE_FULL in credential.scopes:
            return
        assert self.snapshot is not None  # only an admitted request carries an OAuth token
        if any(method in FULL_SCOPE_METHODS for method in methods):
            raise Refused(
                403,
                errors.INVALID_REQUEST,
                f"This access token lacks the {SCOPE_FULL!r} scope needed to call tools",
                [
                    (
                        "www-authenticate",
                        f'Bearer error="insufficient_scope", scope="{SCOPE_FULL}", '
                        f'resource_metadata="{resource_metadata_url(self.snapshot.slug)}"',
                    )
                ],
                reason="insufficient_scope",
            )


SCOPE_FULL = "mcp"
# What a token with only mcp:read may not do: run tools (directly or as tasks).
FULL_SCOPE_METHODS = frozenset({"tools/call", "tasks/create"})


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


def start_background(coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    task = asyncio.create_task(coro)
    BACKGROUND.add(task)
    task.add_done_callback(BACKGROUND.discard)
    return task
