"""The process's keep-alive clock: every ticket gets a turn each period, the turns of many
tickets are spread over the period, and the clock stops when no ticket is held."""

import asyncio
import time

from infra.beat import BUCKETS, Beat, Doorbell
from tests.waiting import wait_until_async


async def test_every_ticket_gets_a_turn_within_one_period():
    beat = Beat(lambda: 0.32)
    tickets = [beat.ticket() for _ in range(50)]
    started = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(t.turn() for t in tickets)), 1)
    assert time.monotonic() - started < 0.32 + 0.2
    for ticket in tickets:
        ticket.close()


async def test_turns_are_spread_over_the_period_not_all_at_once():
    beat = Beat(lambda: 0.32)
    tickets = [beat.ticket() for _ in range(BUCKETS * 4)]
    moments: list[float] = []
    turns = [asyncio.ensure_future(t.turn()) for t in tickets]
    for turn in turns:
        turn.add_done_callback(lambda _f: moments.append(time.monotonic()))
    await asyncio.wait_for(asyncio.gather(*turns), 1)
    # Each bucket's tickets wake together; buckets a slot apart.
    assert len({round(m, 2) for m in moments}) >= BUCKETS // 2
    assert max(moments) - min(moments) >= 0.32 * (BUCKETS - 2) / BUCKETS
    for ticket in tickets:
        ticket.close()


async def test_the_clock_stops_when_the_last_ticket_is_given_back():
    beat = Beat(lambda: 0.16)
    with beat.ticket() as ticket:
        await asyncio.wait_for(ticket.turn(), 1)
    await wait_until_async(
        lambda: beat._clock is not None and beat._clock.done(),
        timeout=1,
        interval=0.01,
        what="the clock to stop",
    )
    # ... and starts again for the next one.
    with beat.ticket() as ticket:
        await asyncio.wait_for(ticket.turn(), 1)


async def test_a_ring_before_the_wait_is_not_lost_and_rings_coalesce():
    bell = Doorbell()
    bell.ring()
    bell.ring()
    await asyncio.wait_for(bell.wait(), 0.1)
    waiting = asyncio.ensure_future(bell.wait())
    await asyncio.sleep(0.02)  # deliberate: a moment in which, not rung, it must NOT end
    assert not waiting.done()
    bell.ring()
    await asyncio.wait_for(waiting, 0.1)


async def test_a_turn_marks_the_ticket_due_and_rings_its_bell():
    beat = Beat(lambda: 0.16)
    bell = Doorbell()
    with beat.ticket(bell) as ticket:
        assert not ticket.take_turn()
        await asyncio.wait_for(bell.wait(), 1)
        assert ticket.take_turn()
        assert not ticket.take_turn()
