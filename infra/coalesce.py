"""Redis commands from many tasks of a process, sent together: one pipeline per batch.

Ten thousand open streams each asking Redis a small question at about the same moment (a
list_changed woke them all, their keep-alives fell due together) used to take ten thousand
pooled connections at once: the pool grew to thousands of sockets, Redis answered them one by
one, and the slowest waited past the socket timeout, which ended their streams. Through the
`Coalescer` the same questions go out as a few pipelines on one connection each: whatever was
asked while the previous batch was in flight goes in the next, at most `CHUNK` commands a
pipeline, `PARALLEL` pipelines at a time.

A command's reply or its error comes back to the task that asked; one failing command does not
fail the others (the pipeline runs with raise_on_error=False).

Like the hub, a coalescer belongs to the event loop it was made in; `coalescer()` returns the
running loop's, on that loop's shared client (infra.redis.async_client).
"""

import asyncio
import weakref

from .redis import async_client

CHUNK = 1000
PARALLEL = 2

_coalescers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Coalescer]" = (
    weakref.WeakKeyDictionary()
)


class Coalescer:
    def __init__(self, redis) -> None:
        self.redis = redis
        self._queue: list[tuple[tuple, dict, asyncio.Future]] = []
        self._flusher: asyncio.Task | None = None
        self.batches = 0  # pipelines sent so far (the streams bench reports it)

    async def execute(self, *args, **options):
        """Send one command with the next batch; returns its reply or raises its error."""
        future = asyncio.get_running_loop().create_future()
        self._queue.append((args, options, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        # Yield once first: every task woken in the same turn of the loop queues its command
        # before the first pipeline leaves.
        await asyncio.sleep(0)
        while self._queue:
            batch, self._queue = self._queue, []
            chunks = [batch[start : start + CHUNK] for start in range(0, len(batch), CHUNK)]
            for first in range(0, len(chunks), PARALLEL):
                await asyncio.gather(*(self._send(c) for c in chunks[first : first + PARALLEL]))

    async def _send(self, chunk) -> None:
        self.batches += 1
        pipe = self.redis.pipeline(transaction=False)
        for args, options, _ in chunk:
            pipe.execute_command(*args, **options)
        try:
            replies = await pipe.execute(raise_on_error=False)
        except Exception as exc:  # noqa: BLE001 - the whole pipeline failed: every asker hears it
            for _, _, future in chunk:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, _, future), reply in zip(chunk, replies, strict=True):
            if future.done():  # the asker was cancelled (its client went away)
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)


def coalescer() -> Coalescer:
    loop = asyncio.get_running_loop()
    found = _coalescers.get(loop)
    if found is None:
        found = _coalescers[loop] = Coalescer(async_client())
    return found
