"""The Redis clients: the real server when REDIS_URL is set, an in-process fakeredis otherwise,
redis-py's cluster clients when REDIS_CLUSTER is on (REDIS_URL then names any one node: the
client discovers the others, follows MOVED/ASK, and after a failover re-reads the slot map), and
redis-py's Sentinel clients when REDIS_URL is `sentinel://...` (infra/redis_sentinel.py: each new
connection asks the Sentinels where the master is, so after a failover commands reach the new one;
a command meeting the dead master retries connection errors for REDIS_SENTINEL_FAILOVER_SECONDS,
infra/redis_failover.py).

Every command has a deadline, so a hung Redis (frozen, partitioned) turns into a
`redis.TimeoutError` the caller answers cleanly instead of a request that never ends:

- connecting is bounded by REDIS_CONNECT_TIMEOUT_SECONDS and each reply by
  REDIS_SOCKET_TIMEOUT_SECONDS;
- a blocking command (BLPOP, XREAD BLOCK, ...) waits as long as it asked the server to block,
  plus that same socket timeout (`TimedConnection` reads the block time from the command);
- a pooled connection that died with a Redis restart is replaced and the command sent again
  once (`Retry` on ConnectionError only: retrying on a timeout would multiply the wait), and
  connections idle for REDIS_HEALTH_CHECK_SECONDS are pinged before reuse.
"""

import asyncio
import math
import weakref
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.asyncio as aioredis
import redis.asyncio.cluster as aiocluster
import redis.cluster
from django.conf import settings
from redis.asyncio.connection import Connection, SSLConnection
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from . import redis_sentinel
from .redis_failover import AsyncFailoverRetry, FailoverRetry
from .redis_pool import IdleTrimmingPool, IdleTrimmingSentinelPool

_sync_client = None
_async_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aioredis.Redis]" = (
    weakref.WeakKeyDictionary()
)
_fake_server = None

# Errors a caller may meet when Redis is down or hung; the endpoint answers them with a 503.
UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError)

BLOCKING_LAST_ARG = {b"BLPOP", b"BRPOP", b"BRPOPLPUSH", b"BLMOVE", b"BZPOPMIN", b"BZPOPMAX"}
BLOCKING_FIRST_ARG = {b"BLMPOP", b"BZMPOP"}
BLOCK_OPTION = {b"XREAD", b"XREADGROUP"}


def _upper(value) -> bytes:
    if isinstance(value, str):
        value = value.encode()
    return value.upper() if isinstance(value, bytes) else b""


def blocking_seconds(args) -> float | None:
    """How long a command asks the server to block (math.inf for "forever"), or None for an
    ordinary command. Only the first word of a multi-word name is looked at (none block)."""
    if not args:
        return None
    name = _upper(args[0])
    try:
        if name in BLOCKING_LAST_ARG:
            seconds = float(args[-1])
        elif name in BLOCKING_FIRST_ARG:
            seconds = float(args[1])
        elif name in BLOCK_OPTION:
            upper = [_upper(arg) for arg in args]
            if b"BLOCK" not in upper:
                return None
            seconds = float(args[upper.index(b"BLOCK") + 1]) / 1000
        else:
            return None
    except (IndexError, TypeError, ValueError):
        return None
    return math.inf if seconds == 0 else seconds


class _TimedReads:
    """Gives the reply of a blocking command the time it asked for, plus the socket timeout."""

    _block_for: float | None = None

    async def send_command(self, *args, **kwargs) -> None:
        self._block_for = blocking_seconds(args)
        await super().send_command(*args, **kwargs)

    async def read_response(self, disable_decoding: bool = False, timeout=None, **kwargs):
        block_for, self._block_for = self._block_for, None
        if timeout is None and block_for is not None:
            timeout = block_for + (self.socket_timeout or 0)
        return await super().read_response(disable_decoding, timeout, **kwargs)


class TimedConnection(_TimedReads, Connection):
    pass


class TimedSSLConnection(_TimedReads, SSLConnection):
    pass


class TimedSentinelConnection(_TimedReads, redis_sentinel.AsyncSentinelConnection):
    pass


def is_embedded() -> bool:
    return not settings.REDIS_URL


def _fake():
    global _fake_server
    if _fake_server is None:
        import fakeredis

        _fake_server = fakeredis.FakeServer()
    return _fake_server


def _common_options() -> dict:
    return {
        "socket_timeout": settings.REDIS_SOCKET_TIMEOUT_SECONDS,
        "socket_connect_timeout": settings.REDIS_CONNECT_TIMEOUT_SECONDS,
        "health_check_interval": settings.REDIS_HEALTH_CHECK_SECONDS,
    }


def _backoff():
    return ExponentialBackoff(cap=0.2, base=0.02)


def is_cluster() -> bool:
    return bool(settings.REDIS_URL) and settings.REDIS_CLUSTER


def is_sentinel() -> bool:
    return redis_sentinel.is_sentinel_url(settings.REDIS_URL)


def sync_standalone(**overrides) -> redis.Redis:
    """A new client of the one Redis (REDIS_URL, or the master its Sentinels name), with
    `overrides` as redis.Redis's options (its own deadlines: servers/invalidation.py)."""
    if is_sentinel():
        options = {
            "retry": FailoverRetry(settings.REDIS_SENTINEL_FAILOVER_SECONDS),
            **_common_options(),
            **overrides,
        }
        return redis_sentinel.sync_master(
            settings.REDIS_URL, settings.REDIS_SENTINEL_MASTER, **options
        )
    return redis.Redis.from_url(settings.REDIS_URL, **overrides)


def async_standalone(**overrides) -> aioredis.Redis:
    """A new asyncio client of the one Redis, apart from the shared one (`async_client()`):
    a worker's run (its own event loop), the coalescer's few connections."""
    if is_sentinel():
        options = {
            "retry": AsyncFailoverRetry(settings.REDIS_SENTINEL_FAILOVER_SECONDS),
            "connection_class": TimedSentinelConnection,
            **_common_options(),
            **overrides,
        }
        return redis_sentinel.async_master(
            settings.REDIS_URL, settings.REDIS_SENTINEL_MASTER, **options
        )
    return aioredis.Redis.from_url(settings.REDIS_URL, **overrides)


# Attempts of one command across a failover: a dead master's slots answer with connection
# errors until a replica is promoted (about cluster-node-timeout), then the slot map is re-read.
CLUSTER_ATTEMPTS = 6


def _cluster_retry(retry_class):
    return retry_class(ExponentialBackoff(cap=0.5, base=0.05), CLUSTER_ATTEMPTS)


class SyncCluster(redis.cluster.RedisCluster):
    """redis-py's cluster client, surviving the death of its "default node": redis-py asks that
    node which arguments of a command with movable keys (XREAD, XREADGROUP) are keys, outside
    its retry loop, so once that node is gone (a killed master) every such command failed with
    a connection error for good. Here the default node is replaced and the question asked
    again."""

    def determine_slot(self, *args):
        try:
            return super().determine_slot(*args)
        except redis.ConnectionError:
            self.replace_default_node()
            return super().determine_slot(*args)


class AsyncCluster(aiocluster.RedisCluster):
    """The asyncio client with the same repair (its command parser asks one node too)."""

    async def _determine_slot(self, command: str, *args):
        try:
            return await super()._determine_slot(command, *args)
        except redis.ConnectionError:
            self.replace_default_node()
            await self.commands_parser.initialize(self.get_default_node())
            return await super()._determine_slot(command, *args)


def cluster_url_and_nodes(url: str) -> tuple[str, list[tuple[str, int]]]:
    """A cluster's REDIS_URL may name several nodes, comma-separated
    (`redis://:pass@10.0.0.1:6379,10.0.0.2:6379/0`): any one that answers tells the client the
    rest, so a process starting while one of them is down still finds the cluster. Returns the
    URL with the first node only, and the others."""
    parts = urlsplit(url)
    userinfo, at, hosts = parts.netloc.rpartition("@")
    first, *others = hosts.split(",")
    nodes = []
    for other in others:
        host, _, port = other.rpartition(":")
        nodes.append((host, int(port)) if host else (other, 6379))
    return urlunsplit(parts._replace(netloc=f"{userinfo}{at}{first}")), nodes


def sync_cluster(**overrides) -> redis.cluster.RedisCluster:
    url, others = cluster_url_and_nodes(settings.REDIS_URL)
    options = {"retry": _cluster_retry(Retry), **_common_options(), **overrides}
    nodes = [redis.cluster.ClusterNode(host, port) for host, port in others]
    return SyncCluster.from_url(url, startup_nodes=nodes, **options)


def async_cluster(**overrides) -> aiocluster.RedisCluster:
    """A new asyncio cluster client (the shared one is `async_client()`): `overrides` replace
    the usual options, as the coalescer's own connections need (infra/coalesce.py)."""
    options = {
        "retry": _cluster_retry(AsyncRetry),
        "max_connections": settings.REDIS_POOL_MAX_IDLE + 10_000,
        **_common_options(),
        **overrides,
    }
    url, others = cluster_url_and_nodes(settings.REDIS_URL)
    nodes = [aiocluster.ClusterNode(host, port) for host, port in others]
    client = AsyncCluster.from_url(url, startup_nodes=nodes, **options)
    # Blocking commands (BLPOP) get their block time on top of the socket timeout here too:
    # the cluster client takes no connection class, so its nodes' shared options are changed
    # before the first node is connected.
    connection_class = (
        TimedSSLConnection if settings.REDIS_URL.startswith("rediss://") else TimedConnection
    )
    client.nodes_manager.connection_kwargs["connection_class"] = connection_class
    for node in client.nodes_manager.startup_nodes.values():
        node.connection_class = connection_class
    return client


def sync_client() -> redis.Redis:
    global _sync_client
    if _sync_client is None:
        if is_embedded():
            import fakeredis

            _sync_client = fakeredis.FakeRedis(server=_fake())
        elif is_cluster():
            _sync_client = sync_cluster()  # type: ignore[assignment]
        elif is_sentinel():
            _sync_client = sync_standalone()
        else:
            _sync_client = redis.Redis.from_url(
                settings.REDIS_URL,
                retry=Retry(_backoff(), 1, supported_errors=(redis.ConnectionError,)),
                **_common_options(),
            )
    return _sync_client


def async_client() -> aioredis.Redis:
    """One client per event loop: redis-py's asyncio connections cannot cross loops."""
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        if is_embedded():
            import fakeredis

            client = fakeredis.FakeAsyncRedis(server=_fake())
        elif is_cluster():
            client = async_cluster()  # type: ignore[assignment]
        elif is_sentinel():
            client = async_standalone(
                pool_class=IdleTrimmingSentinelPool,
                max_idle=settings.REDIS_POOL_MAX_IDLE,
                max_connections=10_000,
            )
        else:
            options = {}
            if settings.REDIS_URL.startswith(("redis://", "rediss://")):
                options["connection_class"] = (
                    TimedSSLConnection
                    if settings.REDIS_URL.startswith("rediss://")
                    else TimedConnection
                )
            pool = IdleTrimmingPool.from_url(
                settings.REDIS_URL,
                max_idle=settings.REDIS_POOL_MAX_IDLE,
                max_connections=10_000,
                retry=AsyncRetry(_backoff(), 1, supported_errors=(redis.ConnectionError,)),
                **_common_options(),
                **options,
            )
            client = aioredis.Redis(connection_pool=pool)
        _async_clients[loop] = client
    return client


def publish(client, channel: str, message):
    """PUBLISH, or on a Redis Cluster SPUBLISH (sharded pub/sub, Redis 7): the message goes to
    the channel's slot's shard only, not to every node, and unlike PUBLISH it may be queued on
    a cluster pipeline (redis-py refuses PUBLISH there). Every subscriber of the platform's
    channels subscribes the same way (infra/hub.py `subscribe`). Returns what `publish` returns:
    a coroutine on an asyncio client, the pipeline on a pipeline."""
    if is_cluster():
        return client.execute_command("SPUBLISH", channel, message)
    return client.publish(channel, message)
