"""An httpx2 transport whose every TCP connection goes to an address the guard has checked.

The check happens where the socket is opened: httpcore2 asks the network backend to connect to
the URL's host, and this backend resolves the host once, refuses the connection if any address
is forbidden, and connects to a checked address itself. Nothing resolves the name a second
time, so a DNS answer that changes between the check and the connect (rebinding) cannot take
the connection elsewhere. TLS still verifies and sends SNI for the name, and the Host header
still carries the name, because httpcore2 takes both from the URL, not from this backend.
Redirects open new connections through the same backend and are checked the same way.
"""

import functools
import ssl
import time

import httpcore2
import httpx2

from observability import tracing

from . import allowance, resolver
from .addresses import METADATA_HOSTNAMES, IPNetwork, check_address
from .errors import BlockedDestination, OutboundError

# How long a long-lived client trusts the organization allow-list it read (staff edits to an
# organization's NetworkAllowance rows take effect within this time).
ALLOW_LIST_SECONDS = 30.0


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    def __init__(
        self, organization_id: int | None = None, networks: list[IPNetwork] | None = None
    ) -> None:
        self._inner = httpcore2.AnyIOBackend()
        self._organization_id = organization_id
        self._fixed = networks
        self._networks: list[IPNetwork] | None = None
        self._read_at = 0.0

    async def allowed(self) -> list[IPNetwork]:
        if self._fixed is not None:
            return self._fixed
        if self._networks is None or time.monotonic() - self._read_at > ALLOW_LIST_SECONDS:
            self._networks = await resolver.allowed_networks(self._organization_id)
            self._read_at = time.monotonic()
        return self._networks

    async def checked_addresses(self, host: str, port: int) -> list:
        name = host.strip("[]").rstrip(".").lower()
        if name in METADATA_HOSTNAMES:
            raise BlockedDestination(f"Requests to {name} are not allowed (cloud metadata).")
        try:
            addresses = await resolver.resolve(name, port)
        except OSError as exc:
            raise OutboundError(f"The host {name} could not be resolved.") from exc
        if not addresses:
            raise OutboundError(f"The host {name} could not be resolved.")
        allowed = await self.allowed()
        for address in addresses:
            reason = check_address(address, allowed)
            if reason:
                shown = name if str(address) == name else f"{name} ({address})"
                raise BlockedDestination(allowance.refusal(shown, address, reason))
        return addresses

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        addresses = await self.checked_addresses(host, port)
        last_error: Exception | None = None
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                last_error = exc
                continue
            return stream
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise BlockedDestination("Requests over Unix sockets are not allowed.")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx2.AsyncHTTPTransport):
    """httpx2's own transport with the connection pool rebuilt around the guarded backend."""

    def __init__(
        self, backend: GuardedBackend, *, limits: httpx2.Limits | None = None, **kwargs
    ) -> None:
        # trust_env=False: a proxy from the environment would connect on our behalf, unchecked.
        super().__init__(trust_env=False, **kwargs)
        limits = limits or httpx2.Limits(max_connections=100, max_keepalive_connections=20)
        self.backend = backend
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=shared_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=backend,
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if tracing.ENABLED:  # a span per request, its context sent on in `traceparent`
            return await tracing.outbound_http(super().handle_async_request, request)
        return await super().handle_async_request(request)


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """One verifying context for every client: building one reads the CA bundle (slow)."""
    return httpx2.create_ssl_context(trust_env=False)
