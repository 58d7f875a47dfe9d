"""The process's keep-alive clock: every ticket gets a turn each period, the turns of many
tickets are spread over the period, and the clock stops when no ticket is held."""

import asyncio
import time

from infra.beat import BUCKETS, Beat


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
    for ticket in tickets:
        ticket.turn().add_done_callback(lambda _f: moments.append(time.monotonic()))
    await asyncio.wait_for(asyncio.gather(*(t.turn() for t in tickets)), 1)
    # Each bucket's tickets wake together; buckets a slot apart.
    assert len({round(m, 2) for m in moments}) >= BUCKETS // 2
    assert max(moments) - min(moments) >= 0.32 * (BUCKETS - 2) / BUCKETS
    for ticket in tickets:
        ticket.close()


async def test_the_clock_stops_when_the_last_ticket_is_given_back():
    beat = Beat(lambda: 0.16)
    with beat.ticket() as ticket:
        await asyncio.wait_for(ticket.turn(), 1)
    await asyncio.sleep(0.1)
    assert beat._clock is not None and beat._clock.done()
    # ... and starts again for the next one.
    with beat.ticket() as ticket:
        await asyncio.wait_for(ticket.turn(), 1)
