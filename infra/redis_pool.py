"""A Redis connection pool that does not keep a burst's connections open for good.

redis-py's pool keeps every connection it ever made: after 2,000 requests at once a process
holds 2,000 idle connections until it exits, and enough processes reach Redis's client limit.
This pool closes a connection handed back while more than `max_idle` wait idle (setting
REDIS_POOL_MAX_IDLE), so after a burst a process returns to its usual handful.
"""

import redis.asyncio as aioredis
from redis.asyncio.sentinel import SentinelConnectionPool


class IdleTrimmingPool(aioredis.ConnectionPool):
    def __init__(self, *args, max_idle: int = 32, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.max_idle = max_idle

    async def release(self, connection) -> None:
        await super().release(connection)
        surplus = None
        async with self._lock:
            if len(self._available_connections) > self.max_idle:
                # The longest idle one: get_available_connection takes from the end.
                surplus = self._available_connections.pop(0)
        if surplus is not None:
            await surplus.disconnect()


class IdleTrimmingSentinelPool(IdleTrimmingPool, SentinelConnectionPool):
    """The same trimming for the pool of a Sentinel-watched master (infra/redis_sentinel.py)."""
