"""One keep-alive clock per process for every open stream, instead of a timer each.

A long-lived stream has periodic chores: send an SSE keep-alive comment, check that its session
still exists, renew its lease under the stream limits, re-read in case a wake-up was lost. With
a timer per stream, streams opened together (a reconnect storm, a benchmark) fall due together
forever after, and ten thousand of them asked Redis at the same instant every period.

Here a stream draws a turn (`Beat.turn`): the period is cut into BUCKETS slots and each stream
belongs to one, round robin, so the chores of a process are spread evenly over the period; a
bucket's streams wake from one shared future and their Redis questions leave as one pipeline
(infra.coalesce). The clock runs only while some stream holds a ticket.

The period is read from `period()` at every slot, so a changed setting applies within a period.
"""

import asyncio
import itertools
import weakref
from collections.abc import Callable

BUCKETS = 16

_beats: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Beat]" = weakref.WeakKeyDictionary()


class Ticket:
    def __init__(self, beat: "Beat", bucket: int):
        self.beat = beat
        self.bucket = bucket

    def turn(self) -> asyncio.Future:
        """A future resolved at this ticket's next turn (shared with its bucket: never cancel it)."""
        return self.beat._futures[self.bucket]

    def close(self) -> None:
        self.beat._leave()

    def __enter__(self) -> "Ticket":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Beat:
    def __init__(self, period: Callable[[], float]) -> None:
        self.period = period
        loop = asyncio.get_running_loop()
        self._futures = [loop.create_future() for _ in range(BUCKETS)]
        self._next_bucket = itertools.cycle(range(BUCKETS))
        self._holders = 0
        self._clock: asyncio.Task | None = None

    def ticket(self) -> Ticket:
        self._holders += 1
        if self._clock is None or self._clock.done():
            self._clock = asyncio.get_running_loop().create_task(self._run())
        return Ticket(self, next(self._next_bucket))

    def _leave(self) -> None:
        self._holders -= 1

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        for bucket in itertools.cycle(range(BUCKETS)):
            await asyncio.sleep(max(self.period(), 0.01) / BUCKETS)
            if self._holders <= 0:
                return
            due, self._futures[bucket] = self._futures[bucket], loop.create_future()
            due.set_result(None)


def beat(period: Callable[[], float]) -> Beat:
    """The running loop's clock (`period` is used when it is first made)."""
    loop = asyncio.get_running_loop()
    found = _beats.get(loop)
    if found is None:
        found = _beats[loop] = Beat(period)
    return found
