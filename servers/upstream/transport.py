"""The HTTP client upstream MCP connections use: the SDK's httpx2, behind the SSRF guard.

The official SDK speaks httpx2, not the httpx the rest of the project's guard is built on, so
this is httpx2's own transport with its connection pool rebuilt around a network backend that
asks the guard (servers/outbound) about every address before it connects to it, and connects
to that checked address itself (no second DNS lookup that a rebinding answer could steer).
"""

import httpcore2
import httpx2

from ..outbound import BlockedDestination
from ..outbound.transport import GuardedBackend


class GuardedBackend2(httpcore2.AsyncNetworkBackend):
    def __init__(self, organization_id: int | None = None, networks=None):
        self._guard = GuardedBackend(organization_id, networks)
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        addresses = await self._guard.checked_addresses(host, port)
        last_error: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise BlockedDestination("Requests over Unix sockets are not allowed.")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def guarded_http_client(
    organization_id: int | None,
    headers: dict | None = None,
    timeout: float = 30.0,
    networks=None,
    event_hooks: dict | None = None,
) -> httpx2.AsyncClient:
    # trust_env=False: a proxy from the environment would connect on our behalf, unchecked.
    transport = httpx2.AsyncHTTPTransport(trust_env=False)
    transport._pool = httpcore2.AsyncConnectionPool(
        ssl_context=httpx2.create_ssl_context(trust_env=False),
        max_connections=20,
        max_keepalive_connections=5,
        network_backend=GuardedBackend2(organization_id, networks),
    )
    return httpx2.AsyncClient(
        transport=transport,
        headers=headers or {},
        # Reads wait longer: a tool's result arrives on a stream that may stay quiet a while.
        timeout=httpx2.Timeout(timeout, read=max(timeout, 300.0)),
        trust_env=False,
        follow_redirects=False,
        event_hooks=event_hooks or {},
    )
