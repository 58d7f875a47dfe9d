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
"""

from typing import Any

from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    _remembered_params: dict[bool, dict[str, Any]]

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
            params = super()._connparams(asynchronous=asynchronous)
            self._remembered_params[asynchronous] = params
        else:
            params = self._remembered_params[asynchronous]
        # A copy: redis-py's pool keeps (and may change) the mapping it is given.
        return dict(params)


class Transport(kombu_redis.Transport):
    Channel = Channel
