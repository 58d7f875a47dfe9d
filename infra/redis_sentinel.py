"""The platform's state on a Sentinel-watched Redis (`REDIS_URL=sentinel://...` with
`REDIS_SENTINEL_MASTER`): failover without a cluster.

The URL has the form the Celery broker's `sentinel://` URL has (kombu's), so one value may
serve both: `sentinel://:password@host1:26379;sentinel://host2:26379;sentinel://host3:26379/0`
(hosts may also be comma-separated in one URL). The password and database are the master's;
the Sentinels are asked without them.

redis-py's Sentinel client asks the Sentinels for the master's address whenever it opens a
connection, and a connection to a master that was demoted (READONLY) is dropped: so after a
failover, a command that met the dead master is sent again (the retry on connection errors,
infra/redis_failover.py) to whichever master the Sentinels name by then. Except that redis-py
reconnects a connection dropped inside a command's retry to the address it had, the dead
master's, without asking the Sentinels (redis/redis-py#3874): `SentinelConnection` and
`AsyncSentinelConnection` reconnect the way a new connection does. Plain imports only (no
settings): scripts/run.py's supervisor uses it before Django is set up.
"""

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import redis
import redis.asyncio as aioredis
import redis.asyncio.sentinel as aiosentinel
import redis.sentinel

SCHEME = "sentinel://"
DEFAULT_PORT = 26379


def is_sentinel_url(url: str) -> bool:
    return url.startswith(SCHEME)


@dataclass(frozen=True)
class SentinelTarget:
    sentinels: list[tuple[str, int]]
    db: int = 0
    username: str | None = None
    password: str | None = None

    def master_options(self) -> dict:
        options: dict = {"db": self.db}
        if self.username:
            options["username"] = self.username
        if self.password:
            options["password"] = self.password
        return options


def _host_port(text: str) -> tuple[str, int]:
    if text.startswith("["):  # [::1]:26379
        host, _, rest = text[1:].partition("]")
        return host, int(rest.lstrip(":") or DEFAULT_PORT)
    host, _, port = text.rpartition(":")
    return (host, int(port)) if host else (text, DEFAULT_PORT)


def parse(url: str) -> SentinelTarget:
    """`sentinel://[user:pass@]h1:26379;sentinel://h2:26379/0` (or `h1:26379,h2:26379`)."""
    sentinels: list[tuple[str, int]] = []
    db, username, password = 0, None, None
    for part in filter(None, (piece.strip() for piece in url.split(";"))):
        if not is_sentinel_url(part):
            raise ValueError(f"not a sentinel:// URL: {part!r}")
        pieces = urlsplit(part)
        userinfo, _, hosts = pieces.netloc.rpartition("@")
        if userinfo:
            user, _, secret = userinfo.partition(":")
            username = unquote(user) or username
            password = unquote(secret) or password
        sentinels.extend(_host_port(host) for host in hosts.split(",") if host)
        if pieces.path.strip("/"):
            db = int(pieces.path.strip("/"))
    if not sentinels:
        raise ValueError("a sentinel:// URL names no Sentinel")
    return SentinelTarget(sentinels, db, username, password)


class SentinelConnection(redis.sentinel.SentinelManagedConnection):
    """A master's connection that, dropped, asks the Sentinels again before it reconnects."""

    def send_packed_command(self, command, check_health: bool = True) -> None:
        # redis-py's own reconnects here to self.host and self.port, where the dead master was.
        if not self._sock:
            self.connect()
        super().send_packed_command(command, check_health)


class AsyncSentinelConnection(aiosentinel.SentinelManagedConnection):
    """The same for the asyncio client: without it, a command whose pooled connection met the
    dead master retried against that address until its retries ran out, however soon a replica
    was promoted."""

    async def send_packed_command(self, command, check_health: bool = True) -> None:
        if not self.is_connected:
            await self.connect()
        await super().send_packed_command(command, check_health)


def _sentinel_options(options: dict) -> dict:
    # The Sentinels get the same deadlines as the master (a hung Sentinel is skipped for the
    # next one), not its password or database.
    keys = ("socket_timeout", "socket_connect_timeout")
    return {key: options[key] for key in keys if options.get(key) is not None}


def sync_master(url: str, master: str, **options) -> redis.Redis:
    """A client of the master `master` the Sentinels of `url` name; `options` as redis.Redis's
    (a deadline, a retry)."""
    target = parse(url)
    manager = redis.sentinel.Sentinel(
        target.sentinels, sentinel_kwargs=_sentinel_options(options), **target.master_options()
    )
    options.setdefault("connection_class", SentinelConnection)
    return manager.master_for(master, redis_class=redis.Redis, **options)


def async_master(
    url: str,
    master: str,
    *,
    pool_class: type[aiosentinel.SentinelConnectionPool] = aiosentinel.SentinelConnectionPool,
    **options,
) -> aioredis.Redis:
    """The asyncio client; `pool_class` may replace redis-py's Sentinel pool with a subclass
    (infra/redis.py trims idle connections), `connection_class` (in `options`) the connection
    with a subclass of `AsyncSentinelConnection`."""
    options.setdefault("connection_class", AsyncSentinelConnection)
    target = parse(url)
    manager = aiosentinel.Sentinel(
        target.sentinels, sentinel_kwargs=_sentinel_options(options), **target.master_options()
    )
    return manager.master_for(
        master, redis_class=aioredis.Redis, connection_pool_class=pool_class, **options
    )
