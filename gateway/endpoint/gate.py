"""The endpoint's hold on one request to /mcp/<slug> or /webtools/<slug>: the HTTP request and
what the pipeline (gateway/pipeline/) made of it. The transports frame bytes around it; every
decision about the request (Host, server, Origin, credential, caller, narrowing, quotas) is a
stage of the pipeline, run through `admit` and `admit_calls` here and nowhere else."""

import asyncio
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any

from redis.asyncio import Redis

from infra.redis import async_client
from mcp_protocol import errors, versions
from mcp_protocol.caller import ANONYMOUS as NO_CALLER
from mcp_protocol.caller import Caller
from servers.snapshot import Snapshot

from ..pipeline import admission, credentials
from ..pipeline.arrival import Arrival, Surface
from ..pipeline.record import Call
from ..pipeline.refused import Refused, bad_api_key, resource_metadata_url, unauthorized
from .context import SessionContext
from .http import HttpRequest
from .sessions import Session

CORS_ALLOW_HEADERS = (
    "content-type, authorization, mcp-session-id, mcp-protocol-version, last-event-id, "
    "mcp-method, mcp-name"
)
CORS_EXPOSE_HEADERS = "mcp-session-id, www-authenticate"
BACKGROUND: set[asyncio.Task[Any]] = set()

__all__ = [
    "Gate",
    "Refused",
    "bad_api_key",
    "resource_metadata_url",
    "session_header",
    "start_background",
    "unauthorized",
]


def session_header(req: HttpRequest) -> str | None:
    sid = req.header("mcp-session-id")
    return sid or None


def arrival_of(req: HttpRequest, surface: Surface, slug: str, version: str | None) -> Arrival:
    return Arrival(
        surface=surface,
        slug=slug,
        version=version,
        host=req.header("host", ""),
        origin=req.header("origin"),
        authorization=req.header("authorization"),
        session_id=session_header(req),
        user_agent=req.header("user-agent", ""),
        client_ip=(req.scope.get("client") or (None,))[0],
    )


class Gate:
    __slots__ = (
        "request",
        "redis",
        "arrival",
        "slug",
        "version",
        "snapshot",
        "credential",
        "caller",
        "admitted",
        "session_id",
        "session",
        "origin",
        "origin_ok",
        "background",
        "watched",
    )

    request: HttpRequest
    redis: Redis
    arrival: Arrival
    slug: str
    version: str | None
    # Set by admit(): the server as this caller sees it (None until admitted).
    snapshot: Snapshot | None
    credential: credentials.Credential
    caller: Caller
    admitted: admission.Admitted | None
    session_id: str | None
    session: Session | None
    origin: str | None
    origin_ok: bool
    background: set[asyncio.Task[Any]]
    watched: bool

    def __init__(
        self,
        request: HttpRequest,
        slug: str,
        version: str | None = None,
        surface: Surface = "mcp",
    ) -> None:
        self.request = request
        self.arrival = arrival_of(request, surface, slug, version)
        self.slug = slug
        self.version = version
        self.redis = async_client()
        self.snapshot = None
        self.credential = credentials.ANONYMOUS
        self.caller = NO_CALLER
        self.admitted = None
        self.session_id = self.arrival.session_id
        self.session = None
        self.origin = self.arrival.origin
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

    def context(self, request: Any, writer: Any = None) -> SessionContext:
        assert self.session is not None  # only a session-era request with its session asks
        return SessionContext(
            redis=self.redis,
            session=self.session,
            request_id=request.id,
            params=request.params,
            caller=self.caller,
            writer=writer,
            client_headers=self.request.headers,
        )

    def call(self, surface: str = "mcp") -> Call:
        """What the record stage needs to know of this request's calls."""
        assert self.snapshot is not None  # only an admitted request's call is recorded
        session = self.session
        return Call(
            snapshot=self.snapshot,
            caller=self.caller,
            surface=surface,
            user_agent=self.arrival.user_agent,
            client_ip=self.arrival.client_ip,
            session_id=session.sid if session else "",
            client_info=session.client_info if session else None,
        )

    async def admit(self, *, preflight: bool = False, methods: tuple[str, ...] = ()) -> None:
        """The pipeline's admission (gateway/pipeline/admission.py); raises Refused with the
        HTTP answer when the request may not go on."""
        if self.session_id != self.arrival.session_id:
            # A legacy POST names its session in the query, not in a header.
            self.arrival = replace(self.arrival, session_id=self.session_id)
        try:
            admitted = await admission.admit(
                self.redis, self.arrival, preflight=preflight, methods=methods
            )
        except Refused as refused:
            if refused.snapshot is not None:
                self.snapshot = refused.snapshot
            self.origin_ok = self.origin_ok or refused.origin_ok
            self.watched = refused.watched
            raise
        self.admitted = admitted
        self.snapshot = admitted.snapshot
        self.credential = admitted.credential
        self.caller = admitted.caller
        self.watched = admitted.watched
        self.origin_ok = True
        session_data = admitted.session_data
        if session_data and admitted.snapshot is not None:
            assert self.session_id is not None  # the mirror found session data under it
            session = Session.from_hash(self.session_id, session_data)
            if (
                session is not None
                and session.server_id == admitted.snapshot.server_id
                and session.credential == admitted.caller.ident
            ):
                self.session = session

    async def admit_calls(self, parsed: Any) -> None:
        """The pipeline's per-message checks: scopes, then quotas (429 with Retry-After)."""
        assert self.admitted is not None  # after admit()
        await admission.admit_calls(self.redis, self.admitted, parsed)

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


def start_background(coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    task = asyncio.create_task(coro)
    BACKGROUND.add(task)
    task.add_done_callback(BACKGROUND.discard)
    return task
