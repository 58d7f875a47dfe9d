"""One Redis pub/sub reader per process, fanning messages out to every open stream.

A long-lived stream (a session's GET stream, the old SSE transport, `subscriptions/listen`, a
task's status relay) used to read on a Redis connection of its own, so 10,000 idle streams held
10,000 connections. Now each process holds ONE subscriber connection: a stream registers the
channels it cares about with `listen()` and is handed each message in-process.

Session streams stay durable in Redis Streams (XADD); writers also PUBLISH a wake-up on the
session's channel (`infra.keys.session_wake`, see `infra.session_streams.append`), and the stream
then reads what is new with one short XREAD on the shared pool. Pub/sub is only the doorbell:
a lost wake-up costs a delay, never an event, because every stream also reads at each keep-alive.

When the subscriber connection breaks (Redis restarted, a network fault), the runner reconnects
with backoff, subscribes every channel again and wakes every stream (`deliver(channel, None)`),
so streams re-read from their last id and nothing published meanwhile is lost.

On a Redis Cluster (REDIS_CLUSTER) the channels are sharded (SSUBSCRIBE; writers SPUBLISH
through `infra.redis.publish`): each channel lives on its slot's shard, so no node carries every
message, and redis-py's cluster pub/sub holds one connection per shard that has a channel of
this process. It reads those connections in turn, each for at most `SHARD_POLL_SECONDS` (so a
message waits at most that long per shard), and after a failover the runner re-reads the slot
map before subscribing again.

The hub belongs to the event loop it was made in (redis-py's asyncio connections cannot cross
loops); `hub()` returns the running loop's.
"""

import asyncio
import logging
import weakref
from collections.abc import Callable
from contextlib import suppress

import redis
from redis.asyncio.client import PubSub

from .redis import async_client, is_cluster

log = logging.getLogger(__name__)

# deliver(channel, data): data is None when the hub reconnected and messages may have been missed.
Deliver = Callable[[str, bytes | None], None]

# How long a listener waits for Redis to confirm its subscription before it reads anyway.
CONFIRM_SECONDS = 2.0
RECONNECT_SECONDS = (0.05, 0.2, 0.5, 1.0, 2.0)
# On a cluster: how long one shard's connection is waited on before the next one's turn.
SHARD_POLL_SECONDS = 0.02


async def subscribe(pubsub, *channels: str) -> None:
    await (pubsub.ssubscribe if is_cluster() else pubsub.subscribe)(*channels)


async def unsubscribe(pubsub, *channels: str) -> None:
    await (pubsub.sunsubscribe if is_cluster() else pubsub.unsubscribe)(*channels)


async def next_message(pubsub, timeout: float) -> dict | None:
    """The next message, subscription confirmations included, as plain pub/sub names them
    ("subscribe", "message") whether the channels are sharded or not."""
    if not is_cluster():
        return await pubsub.get_message(timeout=timeout)
    if not pubsub.node_pubsub_mapping:
        await asyncio.sleep(SHARD_POLL_SECONDS)
        return None
    message = await pubsub.get_sharded_message(timeout=SHARD_POLL_SECONDS)
    if message is not None:
        kind = message["type"]
        kind = kind.decode() if isinstance(kind, bytes) else kind
        message["type"] = {"ssubscribe": "subscribe", "smessage": "message"}.get(kind, kind)
    return message


_hubs: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub]" = weakref.WeakKeyDictionary()


class Subscription:
    def __init__(self, hub: "Hub", channels: list[str], deliver: Deliver):
        self.hub = hub
        self.channels = channels
        self.deliver = deliver

    async def close(self) -> None:
        await self.hub._remove(self)

    async def __aenter__(self) -> "Subscription":
        return self

    async def __aexit__(self, *exc) -> None:
        await asyncio.shield(self.close())


class Hub:
    def __init__(self) -> None:
        self._listeners: dict[str, set[Subscription]] = {}
        self._confirmed: dict[str, asyncio.Future] = {}
        self._pubsub: PubSub | None = None
        self._runner: asyncio.Task | None = None
        self._connected = asyncio.Event()

    def channel_count(self) -> int:
        return len(self._listeners)

    def connected(self) -> bool:
        """Whether the subscriber connection is up now (cleared as soon as the runner sees it
        break; listeners hear `deliver(channel, None)` once it is back)."""
        return self._connected.is_set() and self._pubsub is not None

    async def listen(self, channels: list[str], deliver: Deliver) -> Subscription:
        """Register `deliver` for `channels`; returns once Redis confirmed the new channels
        (or CONFIRM_SECONDS passed), so a message published after this returns is delivered."""
        subscription = Subscription(self, list(dict.fromkeys(channels)), deliver)
        new = []
        for channel in subscription.channels:
            listeners = self._listeners.setdefault(channel, set())
            if not listeners:
                new.append(channel)
            listeners.add(subscription)
        self._ensure_runner()
        if new:
            await self._subscribe(new)
        return subscription

    async def _subscribe(self, channels: list[str]) -> None:
        loop = asyncio.get_running_loop()
        waits = []
        for channel in channels:
            future = self._confirmed.get(channel)
            if future is None or future.done():
                future = self._confirmed[channel] = loop.create_future()
            waits.append(future)
        with suppress(TimeoutError):
            await asyncio.wait_for(self._connected.wait(), CONFIRM_SECONDS)
        if self._pubsub is not None and self._connected.is_set():
            try:
                await subscribe(self._pubsub, *channels)
            except Exception:  # noqa: BLE001 - the connection may be mid-reset by the runner
                # The runner resubscribes every channel when it reconnects.
                log.info("hub: subscribe failed; the reconnect will cover it", exc_info=True)
        with suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*waits), CONFIRM_SECONDS)

    async def _remove(self, subscription: Subscription) -> None:
        gone = []
        for channel in subscription.channels:
            listeners = self._listeners.get(channel)
            if listeners is None:
                continue
            listeners.discard(subscription)
            if not listeners:
                del self._listeners[channel]
                self._confirmed.pop(channel, None)
                gone.append(channel)
        if gone and self._pubsub is not None and self._connected.is_set():
            # The connection may be mid-reset by the runner, which then subscribes only the
            # channels still listened to: nothing to undo here.
            with suppress(Exception):
                await unsubscribe(self._pubsub, *gone)

    def _ensure_runner(self) -> None:
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        attempt = 0
        while self._listeners:
            try:
                pubsub = await self._connect()
                attempt = 0
                await self._read(pubsub)
            except asyncio.CancelledError:
                raise
            except (redis.RedisError, OSError):
                log.warning("hub: the Redis subscriber connection broke; reconnecting")
            finally:
                self._connected.clear()
                await self._drop_connection()
            if not self._listeners:
                break
            await asyncio.sleep(RECONNECT_SECONDS[min(attempt, len(RECONNECT_SECONDS) - 1)])
            attempt += 1

    async def _connect(self) -> PubSub:
        client = async_client()
        if is_cluster():
            # After a failover the cached slot map may still name the dead master.
            await client.nodes_manager.initialize()  # type: ignore[attr-defined]
        pubsub = self._pubsub = client.pubsub()
        channels = list(self._listeners)
        if channels:
            await subscribe(pubsub, *channels)
        elif not is_cluster():  # a cluster's shard connections open with their channels
            await pubsub.connect()
        self._connected.set()
        # Whatever was published while no connection was subscribed would be missed: every
        # listener re-reads (session streams are durable; the rest is best effort anyway).
        for channel in channels:
            for subscription in list(self._listeners.get(channel, ())):
                subscription.deliver(channel, None)
        return pubsub

    async def _read(self, pubsub: PubSub) -> None:
        # `pubsub` is self._pubsub: only this runner replaces it, after _read returns.
        while self._listeners:
            message = await next_message(pubsub, timeout=1.0)
            if message is None:
                continue
            channel = message["channel"]
            channel = channel.decode() if isinstance(channel, bytes) else channel
            kind = message["type"]
            if kind == "subscribe":
                future = self._confirmed.get(channel)
                if future is not None and not future.done():
                    future.set_result(None)
                continue
            if kind != "message":
                continue
            for subscription in list(self._listeners.get(channel, ())):
                subscription.deliver(channel, message["data"])

    async def _drop_connection(self) -> None:
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            with suppress(Exception):
                await pubsub.aclose()


def hub() -> Hub:
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        found = _hubs[loop] = Hub()
    return found
