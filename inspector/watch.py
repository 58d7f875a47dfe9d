"""The "someone is watching" flag of a server's live inspector.

An open inspector socket keeps `mcp:inspect:<slug>` alive (SET with a TTL, refreshed every
REFRESH_SECONDS); the hot path takes it from its per-process state mirror
(gateway/endpoint/mirror.py, re-read at least every MCP_STATE_MAX_STALE_SECONDS) and publishes events only while it exists. The flag is keyed by
slug because the hot path knows the slug before it has the server; it is never deleted on
disconnect (another tab may still watch), it just lapses, so at most TTL_SECONDS of events go
to nobody after the last watcher leaves.
"""

from infra import keys
from servers import state_events

TTL_SECONDS = 10
REFRESH_SECONDS = 3


def flag_key(slug: str) -> str:
    return keys.inspector_watched(slug)


def events_channel(server_id: int) -> str:
    """The pub/sub channel every web process publishes a server's events on."""
    return keys.inspector_events(server_id)


async def keep_alive(redis, slug: str) -> None:
    was = await redis.set(flag_key(slug), b"1", ex=TTL_SECONDS, get=True)
    if was is None:
        # Watching starts now: every process's state mirror drops the server's entry, so its
        # next request reads the flag instead of serving "nobody watches" for up to a bound.
        await state_events.announce_async(redis, state_events.SERVER, slug)
