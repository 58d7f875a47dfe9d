"""The one way this project fetches anything from the network.

`guarded_client()` is an httpx2.AsyncClient for callers that need streaming (upstream MCP
servers); `guarded_request()` is a single request with a total deadline, a size cap and
redirects followed one hop at a time (each hop checked again, credentials dropped when the
origin changes). Both refuse non-public destinations unless the deployment allow-list
(OUTBOUND_ALLOWED_NETWORKS) or the organization's NetworkAllowance rows admit them.
"""

import asyncio
import logging
import time
import weakref
from dataclasses import dataclass, field

import httpx2
import orjson

from .errors import BlockedDestination, OutboundError, OutboundTimeout
from .transport import GuardedBackend, GuardedTransport

# httpx2 logs every request URL at INFO, and URLs may carry API keys in their query strings.
logging.getLogger("httpx2").setLevel(logging.WARNING)

MAX_REDIRECTS = 5
# Headers that carry credentials; never sent on to a different origin after a redirect.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
USER_AGENT = "getmcp/1.0 (+https://github.com/getmcp)"


def guarded_client(
    organization_id: int | None = None, *, networks=None, limits=None, **kwargs
) -> httpx2.AsyncClient:
    """An AsyncClient whose every connection is checked and pinned (see transport.py).

    `networks` replaces the allow-list lookup (deployment + organization) when given;
    `limits` sizes the connection pool.
    """
    backend = GuardedBackend(organization_id, networks)
    kwargs.setdefault("headers", {"user-agent": USER_AGENT})
    transport = GuardedTransport(backend, limits=limits)
    return httpx2.AsyncClient(transport=transport, trust_env=False, **kwargs)


# Long-lived clients for guarded_request, per event loop and per (organization, deployment
# allow-list), so calls reuse kept-alive connections. Reusing a connection is safe: it was
# checked when it was opened and stays pinned to that address.
_shared: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict]" = weakref.WeakKeyDictionary()


def _shared_client(organization_id: int | None) -> httpx2.AsyncClient:
    from .resolver import deployment_networks

    per_loop = _shared.setdefault(asyncio.get_running_loop(), {})
    key = (organization_id, tuple(str(n) for n in deployment_networks()))
    client = per_loop.get(key)
    if client is None or client.is_closed:
        client = per_loop[key] = guarded_client(organization_id)
    return client


@dataclass
class GuardedResponse:
    status_code: int
    reason_phrase: str
    headers: httpx2.Headers
    content: bytes
    truncated: bool
    url: str
    elapsed_ms: float
    request_method: str
    request_headers: httpx2.Headers
    redirects: list[str] = field(default_factory=list)
    connected_to: list[tuple[str, str]] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def encoding(self) -> str:
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                return value.strip('"')
        return "utf-8"

    @property
    def text(self) -> str:
        try:
            return self.content.decode(self.encoding, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    def json(self):
        return orjson.loads(self.content)


def check_url(url: str) -> httpx2.URL:
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, ValueError, TypeError) as exc:
        raise OutboundError(f"The URL {url!r} is not valid: {exc}") from exc
    if parsed.scheme not in ("http", "https"):
        raise BlockedDestination(f"Only http and https URLs can be fetched, not {parsed.scheme!r}.")
    if not parsed.host:
        raise OutboundError(f"The URL {url!r} has no host.")
    return parsed


async def guarded_request(
    method: str,
    url: str,
    *,
    organization_id: int | None = None,
    networks=None,
    headers=None,
    params=None,
    content=None,
    json=None,
    data=None,
    files=None,
    timeout: float = 30.0,
    max_bytes: int = 5 * 1024 * 1024,
    follow_redirects: bool = True,
    max_redirects: int = MAX_REDIRECTS,
    reuse_connections: bool = True,
) -> GuardedResponse:
    """One request; raises BlockedDestination, or OutboundError for timeouts and network failures.

    The body is read up to `max_bytes` (after decompression); more sets `truncated`.
    `reuse_connections=False` uses a client of its own, closed before returning (for callers
    whose event loop lives for one call only).
    """
    check_url(url)
    started = time.perf_counter()
    own = networks is not None or not reuse_connections
    client = (
        guarded_client(organization_id, networks=networks)
        if own
        else _shared_client(organization_id)
    )
    try:
        async with asyncio.timeout(timeout):
            request = client.build_request(
                method,
                url,
                headers=headers,
                params=params,
                content=content,
                json=json,
                data=data,
                files=files,
                timeout=timeout,
            )
            return await _exchange(
                client,
                request,
                max_bytes=max_bytes,
                follow_redirects=follow_redirects,
                max_redirects=max_redirects,
                started=started,
            )
    except (TimeoutError, httpx2.TimeoutException) as exc:
        raise OutboundTimeout(f"The request timed out after {timeout:g} seconds.") from exc
    except httpx2.TooManyRedirects as exc:
        raise OutboundError("The upstream redirected too many times.") from exc
    except httpx2.HTTPError as exc:
        raise OutboundError(_describe(exc)) from exc
    finally:
        if own:
            await client.aclose()


async def _exchange(
    client: httpx2.AsyncClient,
    request: httpx2.Request,
    *,
    max_bytes: int,
    follow_redirects: bool,
    max_redirects: int,
    started: float,
) -> GuardedResponse:
    """Send `request`, then each redirect it earns one hop at a time (each checked again)."""
    redirects: list[str] = []
    connected_to: list[tuple[str, str]] = []
    while True:
        response = await client.send(request, stream=True, follow_redirects=False)
        connected_to.append((request.url.host, _peer_address(response)))
        try:
            next_request = response.next_request if follow_redirects else None
            if next_request is None:
                body, truncated = await _read_capped(response, max_bytes)
                return GuardedResponse(
                    status_code=response.status_code,
                    reason_phrase=response.reason_phrase,
                    headers=response.headers,
                    content=body,
                    truncated=truncated,
                    url=str(request.url),
                    elapsed_ms=(time.perf_counter() - started) * 1000,
                    request_method=request.method,
                    request_headers=request.headers,
                    redirects=redirects,
                    connected_to=connected_to,
                )
        finally:
            await response.aclose()
        if len(redirects) >= max_redirects:
            raise httpx2.TooManyRedirects("too many redirects", request=request)
        check_url(str(next_request.url))
        if _origin(next_request.url) != _origin(request.url):
            for name in list(next_request.headers):
                if name.lower() in CREDENTIAL_HEADERS or name.lower() in _custom(request):
                    del next_request.headers[name]
        redirects.append(str(next_request.url))
        request = next_request


def _describe(exc: httpx2.HTTPError) -> str:
    """A failure in words a user can act on; httpx2's own text may quote the URL (and its keys)."""
    if "CERTIFICATE_VERIFY_FAILED" in str(exc) or "certificate" in str(exc).lower():
        return "The request failed: the server's TLS certificate could not be verified."
    if isinstance(exc, httpx2.ConnectError):
        return "The request failed: could not connect to the server."
    if isinstance(exc, httpx2.RemoteProtocolError):
        return "The request failed: the server broke the HTTP protocol or closed the connection."
    return f"The request failed: {type(exc).__name__}."


def _peer_address(response: httpx2.Response) -> str:
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    return str(peer[0]) if peer else ""


def _custom(request: httpx2.Request) -> set[str]:
    """Caller-set headers beyond the plain ones: they may carry API keys, so they stay home."""
    plain = {
        "accept",
        "accept-encoding",
        "user-agent",
        "content-type",
        "content-length",
        "host",
        "connection",
    }
    return {name.lower() for name in request.headers} - plain


def _origin(url: httpx2.URL) -> tuple:
    return (url.scheme, url.host, url.port)


async def _read_capped(response: httpx2.Response, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False


def guarded_request_sync(method: str, url: str, **kwargs) -> GuardedResponse:
    """guarded_request for synchronous callers (management commands, sync views)."""
    from asgiref.sync import async_to_sync

    kwargs.setdefault("reuse_connections", False)  # each call runs on an event loop of its own
    return async_to_sync(guarded_request)(method, url, **kwargs)
