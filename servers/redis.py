"""The Redis clients: the real server when REDIS_URL is set, an in-process fakeredis otherwise."""

import asyncio
import weakref

import redis
import redis.asyncio as aioredis
from django.conf import settings

from .redis_pool import IdleTrimmingPool

_sync_client = None
_async_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aioredis.Redis]" = (
    weakref.WeakKeyDictionary()
)
_fake_server = None


def is_embedded() -> bool:
    return not settings.REDIS_URL


def _fake():
    global _fake_server
    if _fake_server is None:
        import fakeredis

        _fake_server = fakeredis.FakeServer()
    return _fake_server


def sync_client() -> redis.Redis:
    global _sync_client
    if _sync_client is None:
        if is_embedded():
            import fakeredis

            _sync_client = fakeredis.FakeRedis(server=_fake())
        else:
            _sync_client = redis.Redis.from_url(settings.REDIS_URL)
    return _sync_client


def async_client() -> aioredis.Redis:
    """One client per event loop: redis-py's asyncio connections cannot cross loops."""
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        if is_embedded():
            import fakeredis

            client = fakeredis.FakeAsyncRedis(server=_fake())
        else:
            # No read timeout: BLPOP and XREAD BLOCK wait on purpose, bounded by their own timeouts.
            pool = IdleTrimmingPool.from_url(
                settings.REDIS_URL,
                max_idle=settings.REDIS_POOL_MAX_IDLE,
                max_connections=10_000,
                socket_timeout=None,
                socket_connect_timeout=5,
            )
            client = aioredis.Redis(connection_pool=pool)
        _async_clients[loop] = client
    return client
