"""One client session with an upstream MCP server, built on the official SDK's client.

The session uses the initialize handshake (protocol 2025-11-25 and earlier), which every
server speaks and which keeps a back-channel open for the upstream's own requests
(elicitation, sampling, roots) during a call. Those requests, and its progress and log
notifications, are relayed to our client through the call's RequestContext.
"""

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx2
import mcp_types as types
from mcp.client import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import Cancelled, InputRequired, McpError, ToolError
from observability import tracing
from vault.masking import mask

from ..outbound import OutboundError
from .transport import guarded_http_client

logger = logging.getLogger(__name__)

TRANSPORTS = ("streamable-http", "sse")
CLIENT_INFO = types.Implementation(name="getmcp-upstream-relay", version="1.0.0")


class UpstreamUnreachable(Exception):
    """The upstream could not be reached or would not start a session; `reason` is safe to show."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UpstreamRequestFailed(Exception):
    """The upstream answered a request with a JSON-RPC error (it is reachable)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Upstream:
    """Where an upstream is and how to authenticate to it (headers already rendered)."""

    url: str
    transport: str = "streamable-http"
    headers: tuple[tuple[str, str], ...] = ()
    organization_id: int | None = None
    server_id: int | None = None
    timeout: float = 30.0
    secret_values: tuple[str, ...] = field(default=(), repr=False)

    @property
    def label(self) -> str:
        """How messages name the upstream: its host, never a path or credentials in the URL."""
        parts = urlsplit(self.url)
        host = parts.hostname or "?"
        return f"{host}:{parts.port}" if parts.port else host

    def mask(self, text: str) -> str:
        return mask(text, self.secret_values)


class Relay:
    """Hands what the upstream sends during a call to our client's RequestContext.

    An exception our side raises while answering (the client cancelled; the stateless era
    needs the answer in a later request) cannot travel through the SDK's callback: it is kept
    here and raised again once the upstream call has returned.
    """

    def __init__(
        self, ctx: RequestContext, on_tools_changed: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        self.ctx = ctx
        self.on_tools_changed = on_tools_changed
        self.pending: BaseException | None = None
        self._requests = 0

    def _can(self, capability: str) -> bool:
        return capability in self.ctx.client_capabilities

    async def _ask(self, method: str, params: dict, result_type):
        self._requests += 1
        # Keys follow the order of the upstream's requests, so a call re-run in the stateless
        # era finds each earlier answer under the same key.
        key = f"upstream-{self._requests}"
        try:
            answer = await self.ctx.request(key, method, params)
            return result_type.model_validate(answer)
        except (InputRequired, Cancelled) as exc:
            self.pending = exc
            return types.ErrorData(
                code=types.INTERNAL_ERROR, message="The request was interrupted."
            )
        except McpError as exc:
            return types.ErrorData(code=exc.code, message=exc.message)
        except ToolError as exc:
            return types.ErrorData(code=types.INVALID_REQUEST, message=exc.message)
        except ValidationError:
            return types.ErrorData(
                code=types.INTERNAL_ERROR, message=f"The client's answer to {method} was not valid."
            )

    async def elicit(self, context, params: types.ElicitRequestParams):
        body = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        return await self._ask("elicitation/create", body, types.ElicitResult)

    async def sample(self, context, params: types.CreateMessageRequestParams):
        body = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        return await self._ask("sampling/createMessage", body, types.CreateMessageResult)

    async def roots(self, context):
        return await self._ask("roots/list", {}, types.ListRootsResult)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        await self.ctx.log(params.level, params.data, params.logger)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.ctx.progress(progress, total, message)

    async def message(self, message) -> None:
        if isinstance(message, types.ToolListChangedNotification) and self.on_tools_changed:
            try:
                await self.on_tools_changed()
            except Exception:  # a failed refresh must not break the call that noticed it
                logger.exception("Refreshing the upstream tool list failed")

    def client_kwargs(self) -> dict:
        """Callbacks only for what our client can do: the upstream then sees exactly the
        capabilities it may use."""
        kwargs: dict = {"logging_callback": self.log, "message_handler": self.message}
        if self._can("elicitation"):
            kwargs["elicitation_callback"] = self.elicit
        if self._can("sampling"):
            kwargs["sampling_callback"] = self.sample
        if self._can("roots"):
            kwargs["list_roots_callback"] = self.roots
        return kwargs


class _StatusLog:
    """HTTP error statuses seen on a connection: the SDK reports a 401 as a bare "error
    response", and a person fixing credentials needs the status."""

    def __init__(self) -> None:
        self.errors: list[int] = []

    async def __call__(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            self.errors.append(response.status_code)

    def hooks(self) -> dict:
        return {"response": [self]}


def _transport(upstream: Upstream, http: httpx2.AsyncClient, statuses: _StatusLog):
    if upstream.transport == "sse":
        headers = dict(upstream.headers)

        def factory(headers=None, timeout=None, auth=None):
            # sse_client makes its own client from this factory; ours carries the guard.
            return guarded_http_client(
                upstream.organization_id, headers, upstream.timeout, event_hooks=statuses.hooks()
            )

        return sse_client(
            upstream.url,
            headers=headers,
            timeout=upstream.timeout,
            sse_read_timeout=max(upstream.timeout, 300.0),
            httpx_client_factory=factory,
        )
    return streamable_http_client(upstream.url, http_client=http)


@contextlib.asynccontextmanager
async def connect(upstream: Upstream, relay: Relay | None = None):
    """An initialized `mcp.client.Client` for the upstream; UpstreamUnreachable if there is none."""
    statuses = _StatusLog()
    http = guarded_http_client(
        upstream.organization_id,
        dict(upstream.headers),
        upstream.timeout,
        event_hooks=statuses.hooks(),
    )
    kwargs = relay.client_kwargs() if relay else {}
    client = Client(
        _transport(upstream, http, statuses),
        mode="legacy",
        client_info=CLIENT_INFO,
        cache=None,
        read_timeout_seconds=None,
        **kwargs,
    )
    async with http:
        try:
            async with asyncio.timeout(upstream.timeout):
                await client.__aenter__()
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise UpstreamUnreachable(describe(exc, upstream, statuses.errors)) from None
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                await client.__aexit__(None, None, None)


def _leaves(exc: BaseException):
    """The exceptions inside exception groups and behind `raise ... from`."""
    seen = set()
    stack = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
            continue
        yield current
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                stack.append(linked)


def _status_reason(status: int) -> str:
    reason = f"it answered HTTP {status}"
    if status in (401, 403):
        reason += " (check the credentials it is given)"
    return reason


def describe(exc: BaseException, upstream: Upstream, statuses: list[int] | None = None) -> str:
    """Why the upstream could not be used, in words safe to show (secrets masked)."""
    reason = _status_reason(statuses[-1]) if statuses else None
    for leaf in () if reason else _leaves(exc):
        if isinstance(leaf, OutboundError):
            reason = leaf.message
        elif isinstance(leaf, httpx2.HTTPStatusError):
            reason = _status_reason(leaf.response.status_code)
        elif isinstance(leaf, httpx2.TimeoutException | TimeoutError):
            reason = f"it did not answer within {upstream.timeout:g} seconds"
        elif isinstance(leaf, httpx2.ConnectError | ConnectionError | OSError):
            reason = "the connection failed"
        elif isinstance(leaf, MCPError):
            reason = f"it refused the session ({leaf.error.message})"
        if reason:
            break
    if reason is None:
        reason = f"{type(exc).__name__}"
    return upstream.mask(reason)


async def list_tools(client: Client) -> list[dict]:
    """Every tool the upstream lists, as MCP wire dicts."""
    tools: list[dict] = []
    cursor = None
    for _page in range(100):  # a paginator that never ends cannot hang a refresh
        result = await client.list_tools(cursor=cursor)
        tools += [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in result.tools]
        cursor = result.next_cursor
        if not cursor:
            break
    return tools


async def call_tool(client: Client, name: str, arguments: dict, relay: Relay | None) -> dict:
    """The upstream's CallToolResult as a dict (content, structuredContent, isError)."""
    try:
        # The span covers the call itself; its context travels in `_meta.traceparent` (and in
        # the HTTP header, from servers/outbound) so the upstream's spans join the trace.
        with tracing.upstream_call("tools/call", name) as meta:
            result = await client.call_tool(
                name, arguments, progress_callback=relay.progress if relay else None, meta=meta
            )
    except MCPError as exc:
        if relay and relay.pending:
            raise relay.pending from None
        raise UpstreamRequestFailed(exc.error.code, exc.error.message) from None
    if relay and relay.pending:
        raise relay.pending
    data = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    answer = {"content": data.get("content", [])}
    if "structuredContent" in data:
        answer["structuredContent"] = data["structuredContent"]
    if data.get("isError"):
        answer["isError"] = True
    return answer
