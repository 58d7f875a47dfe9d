"""Who takes a sandbox worker: shares by paying account and by organization, the last free
worker kept for an account holding none, and a fair queue across accounts."""

import asyncio

import pytest

from servers.kinds.code import shares
from servers.kinds.code.shares import Tenant, hold, let_go

# One person paying for three organizations; two other people.
A1, A2, A3 = (Tenant.of(owner_id=1, organization_id=org) for org in (11, 12, 13))
B = Tenant.of(owner_id=2, organization_id=21)
C = Tenant.of(owner_id=3, organization_id=31)


@pytest.fixture(autouse=True)
def four_workers(settings):
    settings.CODE_SANDBOX_WORKERS = 4
    settings.CODE_SANDBOX_PER_ORG = 0
    settings.CODE_SANDBOX_PER_OWNER = 0
    assert shares.held() == {}
    yield
    assert shares.held() == {}, "a test left workers held"


async def settle():
    """Let woken waiters run (grants are made at once; only their wake-up is scheduled)."""
    for _ in range(5):
        await asyncio.sleep(0)  # deliberate: a turn of the loop each, no time waited


def test_an_organization_without_a_paying_account_counts_as_its_own():
    assert Tenant.of(owner_id=None, organization_id=5).account == "org:5"
    assert Tenant.of(owner_id=7, organization_id=5).account == "owner:7"


async def test_three_organizations_of_one_person_share_that_persons_workers():
    for tenant in (A1, A2, A3):
        assert await hold(tenant)
    assert shares.held() == {"owner:1": 3}
    fourth = asyncio.ensure_future(hold(A1))
    await settle()
    assert not fourth.done()  # each organization is under its own share; the person is not
    # Another person finds the worker left at once.
    assert await hold(B)
    let_go(B)
    await settle()
    assert not fourth.done()  # the last free worker is kept for someone holding none
    let_go(A2)
    assert await fourth
    for tenant in (A1, A1, A3):
        let_go(tenant)


async def test_a_freed_worker_goes_to_the_account_holding_fewest_not_the_first_in_line():
    for tenant in (A1, A2, A3, B):
        assert await hold(tenant)
    first_in_line = asyncio.ensure_future(hold(A1))
    await settle()
    second_in_line = asyncio.ensure_future(hold(C))
    await settle()
    let_go(B)
    assert await second_in_line  # C held none
    assert not first_in_line.done()
    let_go(C)
    let_go(A2)
    assert await first_in_line
    for tenant in (A1, A1, A3):
        let_go(tenant)


async def test_the_organization_share_still_holds_inside_one_account(settings):
    settings.CODE_SANDBOX_PER_ORG = 1
    assert await hold(A1)
    second = asyncio.ensure_future(hold(A1))
    await settle()
    assert not second.done()
    assert await hold(A2)  # the same person's other organization is under its own share
    let_go(A1)
    assert await second
    let_go(A1)
    let_go(A2)


async def test_a_waiter_that_runs_out_of_time_is_refused_and_leaves_nothing_held(monkeypatch):
    monkeypatch.setattr(shares, "CHECKOUT_TIMEOUT_SECONDS", 0.05)
    for tenant in (A1, A2, A3, B):
        assert await hold(tenant)
    assert await hold(C) is False
    for tenant in (A1, A2, A3, B):
        let_go(tenant)


async def test_a_cancelled_waiter_gives_back_a_worker_granted_as_it_was_cancelled():
    for tenant in (A1, A2, A3, B):
        assert await hold(tenant)
    waiter = asyncio.ensure_future(hold(C))
    await settle()
    let_go(B)  # granted to C; its wake-up is only scheduled
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert shares.held() == {"owner:1": 3}
    assert await hold(C)
    for tenant in (A1, A2, A3, C):
        let_go(tenant)


async def test_a_waiter_on_another_event_loop_is_woken_there():
    for tenant in (A1, A2, A3, B):
        assert await hold(tenant)
    import threading

    outcome = {}

    def other_loop():
        outcome["held"] = asyncio.run(hold(C))

    thread = threading.Thread(target=other_loop)
    thread.start()
    from tests.waiting import wait_until_async

    await wait_until_async(lambda: shares._waiters, what="the other loop's waiter")
    let_go(B)
    await asyncio.to_thread(thread.join, 5)
    assert outcome == {"held": True}
    for tenant in (A1, A2, A3, C):
        let_go(tenant)
