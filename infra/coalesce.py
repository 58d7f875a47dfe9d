"""Redis commands from many tasks of a process, sent together: one pipeline per batch.

Ten thousand open streams each asking Redis a small question at about the same moment (a
list_changed woke them all, their keep-alives fell due together) used to take ten thousand
pooled connections at once: the pool grew to thousands of sockets, Redis answered them one by
one, and the slowest waited past the socket timeout, which ended their streams. Through the
`Coalescer` the same questions go out as a few pipelines on one connection each: whatever was
asked while the previous batch was in flight goes in the next, at most `CHUNK` commands a
pipeline, `PARALLEL` pipelines at a time.

A command's reply or its error comes back to the task that asked; one failing command does not
fail the others (the pipeline runs with raise_on_error=False). A command asked with
`shared=True` (a read, or a write whose repetition changes nothing, such as EXPIRE) is sent once
per batch however many tasks ask it: five thousand listen streams of one server checking its
generation cost one GET.

Each reply of a batch is read without a deadline of its own (redis-py arms a timer per reply,
which doubled the cost of a thousand-command pipeline); the batch as a whole has one,
BATCH_TIMEOUT_FACTOR times REDIS_SOCKET_TIMEOUT_SECONDS (on a Sentinel-watched master, plus
REDIS_SENTINEL_FAILOVER_SECONDS), after which its connection is dropped and every asker hears a
TimeoutError.

Like the hub, a coalescer belongs to the event loop it was made in; `coalescer()` returns the
running loop's, on that loop's shared client (infra.redis.async_client).
"""

import asyncio
import weakref

import redis
import redis.asyncio as aioredis
from django.conf import settings

from .redis import (
    async_client,
    async_cluster,
    async_standalone,
    is_cluster,
    is_embedded,
    is_sentinel,
)

CHUNK = 1000
PARALLEL = 2
BATCH_TIMEOUT_FACTOR = 2

_coalescers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Coalescer]" = (
    weakref.WeakKeyDictionary()
)


class Coalescer:
    def __init__(self, client, deadline: float | None = None) -> None:
        self.redis = client
        self.deadline = deadline
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: list[tuple[tuple, dict, list[asyncio.Future]]] = []
        self._shared: dict[tuple, list[asyncio.Future]] = {}
        self._flusher: asyncio.Task | None = None
        self.batches = 0  # pipelines sent so far

    async def execute(self, *args, shared: bool = False, **options):
        """Send one command with the next batch; returns its reply or raises its error."""
        return await self.submit(*args, shared=shared, **options)

    def submit(self, *args, shared: bool = False, **options) -> asyncio.Future:
        """`execute` as a future: several of them gathered cost no task each."""
        if self._loop is None:
            # Kept: asyncio.get_running_loop() makes a getpid() system call each time, and ten
            # thousand streams ask here at every turn.
            self._loop = asyncio.get_running_loop()
        future = self._loop.create_future()
        if shared:
            askers = self._shared.get(args)
            if askers is not None:
                # Each asker has its own future (one going away cancels only its own), all
                # answered from the one reply: cheaper than a shield per asker.
                askers.append(future)
                return future
            askers = self._shared[args] = [future]
        else:
            askers = [future]
        self._queue.append((args, options, askers))
        if self._flusher is None or self._flusher.done():
            self._flusher = self._loop.create_task(self._flush())
        return future

    async def _flush(self) -> None:
        # Yield once first: every task woken in the same turn of the loop queues its command
        # before the first pipeline leaves.
        await asyncio.sleep(0)
        while self._queue:
            batch, self._queue = self._queue, []
            self._shared = {}
            chunks = [batch[start : start + CHUNK] for start in range(0, len(batch), CHUNK)]
            for first in range(0, len(chunks), PARALLEL):
                await asyncio.gather(*(self._send(c) for c in chunks[first : first + PARALLEL]))

    async def _send(self, chunk) -> None:
        self.batches += 1
        pipe = self.redis.pipeline(transaction=False)
        for args, options, _ in chunk:
            pipe.execute_command(*args, **options)
        try:
            async with asyncio.timeout(self.deadline):
                replies = await pipe.execute(raise_on_error=False)
        except TimeoutError:
            _fail(chunk, redis.TimeoutError("Timeout reading a batch of commands"))
            return
        except Exception as exc:  # noqa: BLE001 - the whole pipeline failed: every asker hears it
            _fail(chunk, exc)
            return
        for (_, _, askers), reply in zip(chunk, replies, strict=True):
            failed = isinstance(reply, Exception)
            for future in askers:
                if future.done():  # the asker was cancelled (its client went away)
                    continue
                if failed:
                    future.set_exception(reply)
                else:
                    future.set_result(reply)


def _fail(chunk, exc: BaseException) -> None:
    for _, _, askers in chunk:
        for future in askers:
            if not future.done():
                future.set_exception(exc)


def coalescer() -> Coalescer:
    loop = asyncio.get_running_loop()
    found = _coalescers.get(loop)
    if found is None:
        if is_embedded():
            found = Coalescer(async_client())
        elif is_cluster():
            # Its own cluster client: a connection or few per node, no per-reply deadline.
            deadline = BATCH_TIMEOUT_FACTOR * float(settings.REDIS_SOCKET_TIMEOUT_SECONDS)
            found = Coalescer(async_cluster(socket_timeout=None), deadline)  # type: ignore[arg-type]
        elif is_sentinel():
            client = async_standalone(max_connections=PARALLEL * 4, socket_timeout=None)
            # A batch that meets a dead master waits out the failover in the client's retries
            # (REDIS_SENTINEL_FAILOVER_SECONDS) before this deadline may end it.
            deadline = BATCH_TIMEOUT_FACTOR * float(settings.REDIS_SOCKET_TIMEOUT_SECONDS)
            deadline += settings.REDIS_SENTINEL_FAILOVER_SECONDS
            found = Coalescer(client, deadline)
        else:
            # Its own few connections, with no per-reply deadline (see above).
            pool = aioredis.ConnectionPool.from_url(
                settings.REDIS_URL,
                max_connections=PARALLEL * 4,
                socket_timeout=None,
                socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT_SECONDS,
                health_check_interval=settings.REDIS_HEALTH_CHECK_SECONDS,
            )
            deadline = BATCH_TIMEOUT_FACTOR * float(settings.REDIS_SOCKET_TIMEOUT_SECONDS)
            found = Coalescer(aioredis.Redis(connection_pool=pool), deadline)
        _coalescers[loop] = found
    return found
