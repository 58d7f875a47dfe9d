"""The HTTP client upstream MCP connections use: the project's one guarded client, tuned for MCP.

The official SDK and the rest of the project speak the same httpx2, so this is the guarded
client from servers/outbound (every address checked and pinned before it is connected to) with
the pool size, timeouts and hooks an upstream MCP connection needs.
"""

import httpx2

from ..outbound.client import guarded_client


def guarded_http_client(
    organization_id: int | None,
    headers: dict | None = None,
    timeout: float = 30.0,
    networks=None,
    event_hooks: dict | None = None,
) -> httpx2.AsyncClient:
    return guarded_client(
        organization_id,
        networks=networks,
        limits=httpx2.Limits(max_connections=20, max_keepalive_connections=5),
        headers=headers or {},
        # Reads wait longer: a tool's result arrives on a stream that may stay quiet a while.
        timeout=httpx2.Timeout(timeout, read=max(timeout, 300.0)),
        follow_redirects=False,
        event_hooks=event_hooks or {},
    )
