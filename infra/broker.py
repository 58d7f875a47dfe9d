"""The Celery broker's Redis transport: kombu's, made to survive a Redis restart while a worker
holds a message (settings.CELERY_BROKER_TRANSPORT names it when the broker is Redis).

What kombu 5.7 does when a worker's Redis connection drops (issue 30): the consumer calls
`Connection.collect()`, which closes the default channel and then detaches the transport from
its `Connection` (`transport.client = None`). The first close fails on the dead socket before the
channel is marked closed, so the consumer's `connection.close()` closes it again; that close
drops the channel's connection pools and only then restores the unacknowledged messages
(`QoS.restore_unacked_once`), which builds a new pool from `transport.client.hostname`: an
`AttributeError` on `None`, which no connection-error handler catches, so the worker logs
"Unrecoverable error" and exits. The same happens to the acknowledgement of a task that was
running at that moment (`acks_late`), when it finishes.

The channel here remembers the connection parameters it was built with. A pool it needs after
the transport was detached (the restore at close, a late ack on the old channel) is built from
them: with Redis back, the message is acknowledged (or put back in its queue); with Redis still
away, that is a connection error, which kombu and Celery already handle ("Couldn't ack", and the
message stays in Redis's unacked index, restored after the visibility timeout).

kombu's Sentinel transport (`sentinel://` broker URLs) has the same flaw, and its pools also read
the Sentinels' addresses from the detached `Connection` (`client.alt`): a master killed under a
worker made it exit the same way (tests/scale/test_redis_sentinel.py). `SentinelChannel`
remembers those too.

The Sentinel channel's connections also make one attempt each (no redis-py retries): redis-py's
default retries every connect three times with backoff, nested in the Sentinels' discovery and
again in the master's connect, so a publish with the master and every Sentinel dead hung for a
minute before kombu's own retries even began. Retrying is the caller's, for a span of time
(infra/broker_publish.py); the Sentinels get the transport's socket timeouts
(`socket_connect_timeout`, `socket_timeout` options), so a hung one costs no more than those.

kombu takes each Sentinel of the URL for a failover host: after a connection error it switches
to the next (`Connection.maybe_switch_next`), and the switch builds the transport that host's
scheme names, kombu's own, which lost all of the above on the first retry of a publish. The
`sentinel` scheme names the transport here instead.
"""

from typing import Any

import redis
import redis.sentinel
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis
from redis.backoff import NoBackoff
from redis.retry import Retry


def _one_attempt() -> Retry:
    return Retry(NoBackoff(), 0)


class _RememberingParams:
    """Connection parameters kept from while the transport still had its client."""

    _remembered_params: dict[bool, dict[str, Any]]
    connection: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._remembered_params = {}
        super().__init__(*args, **kwargs)
        # Both kinds now, while the transport still knows its client: kombu builds the sync
        # pool lazily, possibly only once the transport has been detached.
        for asynchronous in (False, True):
            if asynchronous not in self._remembered_params:
                self._connparams(asynchronous=asynchronous)

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection.client is not None:
            params = super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]
            self._remembered_params[asynchronous] = params
        else:
            params = self._remembered_params[asynchronous]
        # A copy: redis-py's pool keeps (and may change) the mapping it is given.
        return dict(params)


class Channel(_RememberingParams, kombu_redis.Channel):
    pass


class Transport(kombu_redis.Transport):
    Channel = Channel


class SentinelChannel(_RememberingParams, kombu_redis.SentinelChannel):
    _remembered_sentinels: list[tuple[str, int]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # As kombu finds them: each `sentinel://` of the URL, else the URL's own host.
        client = self.connection.client
        self._remembered_sentinels = [
            (url.hostname, url.port or client.default_port)
            for url in map(kombu_redis._parse_url, client.alt)
            if url.scheme == "sentinel"
        ]
        if not self._remembered_sentinels:
            params = self._remembered_params[False]
            self._remembered_sentinels = [(params["host"], params["port"])]

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        return {**super()._connparams(asynchronous), "retry": _one_attempt()}

    def _sentinel_managed_pool(self, asynchronous: bool = False):
        self.sentinel_kwargs = {
            "socket_connect_timeout": self.socket_connect_timeout,
            "socket_timeout": self.socket_timeout,
            **(getattr(self, "sentinel_kwargs", None) or {}),
            "retry": _one_attempt(),
        }
        if self.connection.client is not None:
            return super()._sentinel_managed_pool(asynchronous)
        # Detached: what kombu's method builds, from the remembered Sentinels.
        params = self._connparams(asynchronous)
        params.pop("host", None)
        params.pop("port", None)
        manager = redis.sentinel.Sentinel(
            self._remembered_sentinels,
            min_other_sentinels=getattr(self, "min_other_sentinels", 0),
            sentinel_kwargs=self.sentinel_kwargs,
            **params,
        )
        credentials = {key: params[key] for key in ("username", "password") if key in params}
        master = getattr(self, "master_name", None)  # a transport option
        return manager.master_for(master, redis.Redis, **credentials).connection_pool


class SentinelTransport(kombu_redis.SentinelTransport):
    Channel = SentinelChannel


TRANSPORT_ALIASES["sentinel"] = f"{__name__}:SentinelTransport"
