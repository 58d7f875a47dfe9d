"""One keep-alive clock per process for every open stream, instead of a timer each.

A long-lived stream has periodic chores: send an SSE keep-alive comment, check that its session
still exists, renew its lease under the stream limits, re-read in case a wake-up was lost. With
a timer per stream, streams opened together (a reconnect storm, a benchmark) fall due together
forever after, and ten thousand of them asked Redis at the same instant every period.

Here a stream holds a ticket (`Beat.ticket`): the period is cut into BUCKETS slots and each
ticket belongs to one, round robin, so the chores of a process are spread evenly over the
period; at its slot the clock marks every ticket of the bucket due and rings its `Doorbell`,
and the streams' Redis questions of that moment leave as one pipeline (infra.coalesce). The
clock runs only while some ticket is held.

A stream waits on one `Doorbell` that everything which may need it rings (its turn, a wake-up
from the hub, its client going away): one future per wait, not a task and an `asyncio.wait` over
three futures each time. At ten thousand streams that per-turn overhead was most of the streams'
idle CPU (docs/scaling.md).

The period is read from `period()` at every slot, so a changed setting applies within a period.
"""

import asyncio
import itertools
import weakref
from collections.abc import Callable

BUCKETS = 16

_beats: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Beat]" = weakref.WeakKeyDictionary()


class Doorbell:
    """A wake-up for one waiting task; rings before the wait are not lost (they coalesce)."""

    __slots__ = ("_loop", "_rung", "_waiter")

    def __init__(self) -> None:
        self._rung = False
        self._waiter: asyncio.Future | None = None
        # Kept from the first wait: asyncio.get_running_loop() makes a getpid() system call.
        self._loop: asyncio.AbstractEventLoop | None = None

    def ring(self) -> None:
        self._rung = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        """Return at the next ring, or at once if it rang since the last wait returned."""
        if not self._rung:
            if self._loop is None:
                self._loop = asyncio.get_running_loop()
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        self._rung = False


class Ticket:
    __slots__ = ("beat", "bucket", "bell", "due")

    def __init__(self, beat: "Beat", bucket: int, bell: Doorbell):
        self.beat = beat
        self.bucket = bucket
        self.bell = bell
        self.due = False

    def take_turn(self) -> bool:
        """Whether this ticket's turn came since the last call."""
        due, self.due = self.due, False
        return due

    async def turn(self) -> None:
        """Wait for this ticket's next turn (only for a holder that waits on nothing else)."""
        while not self.take_turn():
            await self.bell.wait()

    def close(self) -> None:
        self.beat._leave(self)

    def __enter__(self) -> "Ticket":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Beat:
    def __init__(self, period: Callable[[], float]) -> None:
        self.period = period
        self._buckets: list[set[Ticket]] = [set() for _ in range(BUCKETS)]
        self._next_bucket = itertools.cycle(range(BUCKETS))
        self._holders = 0
        self._clock: asyncio.Task | None = None

    def ticket(self, bell: Doorbell | None = None) -> Ticket:
        """A place on the clock; at each turn it is marked due and `bell` is rung."""
        self._holders += 1
        if self._clock is None or self._clock.done():
            self._clock = asyncio.get_running_loop().create_task(self._run())
        ticket = Ticket(self, next(self._next_bucket), bell or Doorbell())
        self._buckets[ticket.bucket].add(ticket)
        return ticket

    def _leave(self, ticket: Ticket) -> None:
        if ticket in self._buckets[ticket.bucket]:
            self._buckets[ticket.bucket].discard(ticket)
            self._holders -= 1

    async def _run(self) -> None:
        for bucket in itertools.cycle(range(BUCKETS)):
            await asyncio.sleep(max(self.period(), 0.01) / BUCKETS)
            if self._holders <= 0:
                return
            for ticket in self._buckets[bucket]:
                ticket.due = True
                ticket.bell.ring()


def beat(period: Callable[[], float]) -> Beat:
    """The running loop's clock (`period` is used when it is first made)."""
    loop = asyncio.get_running_loop()
    found = _beats.get(loop)
    if found is None:
        found = _beats[loop] = Beat(period)
    return found
