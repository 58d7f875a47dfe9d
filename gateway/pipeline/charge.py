"""Stage 4, charge: the request and its tool calls counted against the limits that apply
(servers/quotas.py holds the rules and their one Lua script); over one, `Refused` 429 with
Retry-After, and nothing is counted.

In: the narrowed snapshot and the credential (its limits; its ident names the counters).
`request` counts every request against the server's own rateLimitPerMinute; `calls` counts the
tool calls a message makes (a parsed body, or the tool names REST and Webtools are given)."""

from typing import Any

from redis.asyncio import Redis

from mcp_protocol import errors
from servers import quotas
from servers.snapshot import Snapshot

from .credentials import Credential
from .refused import Refused


async def request(redis: Redis, snapshot: Snapshot, credential: Credential) -> None:
    """The server's rate limit: a window per server and credential in Redis, so neither a
    reconnect nor another worker resets it. A server without one costs nothing here."""
    if not snapshot.rate_limit_per_minute:
        return
    try:
        await quotas.charge_request(redis, snapshot, credential)
    except quotas.OverLimit as over:
        raise Refused(
            429,
            errors.SERVER_ERROR,
            over.message,
            [("retry-after", str(over.retry_after))],
            reason="rate_limited",
        ) from None


async def calls(redis: Redis, snapshot: Snapshot, credential: Credential, parsed: Any) -> None:
    try:
        await quotas.charge(redis, snapshot, credential, quotas.tool_calls(parsed))
    except quotas.OverLimit as over:
        retry = [("retry-after", str(over.retry_after))]
        request_id = getattr(parsed, "id", None)
        raise Refused(
            429, quotas.RATE_LIMITED, over.message, retry, request_id, reason="rate_limited"
        ) from None
