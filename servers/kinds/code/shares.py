"""Who may take a sandbox worker now, and who is served first when none is free.

Organizations cost nothing to make, so a share per organization alone is one a person can
multiply: three organizations of one attacker, each under its own share, held every worker of
the pool while another tenant's code tool waited seconds. So a call counts at two levels:

- its paying account (`Organization.billing_owner`; an organization without one counts as its
  own account): at most CODE_SANDBOX_PER_OWNER workers at once (0: all but one);
- its organization: at most CODE_SANDBOX_PER_ORG workers at once (0: all but one);

and the last free worker goes only to an account that holds none, so another person's call finds
a worker as soon as one is free, however many organizations or calls one account has.

Calls that must wait are served by a fair queue, not by whoever polls first: when a worker is
given back, the waiting call whose account holds the fewest workers takes it (the oldest among
equals), so a hundred queued calls of one account never stand before another account's one.
A waiter is woken on its own event loop (the pool is shared by every loop of the process).

All of this is per process, like the pool itself (each web and Celery process has its own).
"""

import asyncio
import itertools
import threading
from collections import Counter
from dataclasses import dataclass

from django.conf import settings

# How long a call waits for a worker before it is refused (a tool error: try again shortly).
CHECKOUT_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class Tenant:
    """Whom a call's worker counts against."""

    account: str  # "owner:<user id>", or "org:<organization id>" without a paying account
    organization: int | None

    @classmethod
    def of(cls, *, owner_id: int | None, organization_id: int | None) -> "Tenant":
        account = f"owner:{owner_id}" if owner_id is not None else f"org:{organization_id}"
        return cls(account=account, organization=organization_id)


@dataclass(eq=False, slots=True)
class _Waiter:
    tenant: Tenant
    order: int
    loop: asyncio.AbstractEventLoop
    future: "asyncio.Future[None]"
    granted: bool = False


_lock = threading.Lock()
_by_account: Counter[str] = Counter()
_by_organization: Counter[int | None] = Counter()
_waiters: list[_Waiter] = []
_arrivals = itertools.count()


def workers() -> int:
    return max(1, settings.CODE_SANDBOX_WORKERS)


def _share(configured: int) -> int:
    total = workers()
    return max(1, min(configured or total - 1, total))


def account_share() -> int:
    """Workers one paying account may hold at once in this process."""
    return _share(settings.CODE_SANDBOX_PER_OWNER)


def organization_share() -> int:
    """Workers one organization may hold at once in this process."""
    return _share(settings.CODE_SANDBOX_PER_ORG)


def held() -> dict[str, int]:
    """Workers held per account right now (for tests and diagnostics)."""
    with _lock:
        return dict(_by_account)


def _may_take(tenant: Tenant) -> bool:
    free = workers() - sum(_by_account.values())
    if free <= 0:
        return False
    mine = _by_account[tenant.account]
    if mine >= account_share() or _by_organization[tenant.organization] >= organization_share():
        return False
    # The last free worker is kept for an account holding none.
    return free > 1 or mine == 0


def _take(tenant: Tenant) -> None:
    _by_account[tenant.account] += 1
    _by_organization[tenant.organization] += 1


def _give_back(tenant: Tenant) -> None:
    _by_account[tenant.account] -= 1
    if _by_account[tenant.account] <= 0:
        del _by_account[tenant.account]
    _by_organization[tenant.organization] -= 1
    if _by_organization[tenant.organization] <= 0:
        del _by_organization[tenant.organization]


def _wake(future: "asyncio.Future[None]") -> None:
    if not future.done():
        future.set_result(None)


def _serve_waiters() -> None:
    """Give free workers to waiters, fewest-held account first. Called with _lock held after
    every change; so between changes no waiter is left that could take a worker."""
    while _waiters:
        eligible = [waiter for waiter in _waiters if _may_take(waiter.tenant)]
        if not eligible:
            return
        chosen = min(eligible, key=lambda w: (_by_account[w.tenant.account], w.order))
        _waiters.remove(chosen)
        _take(chosen.tenant)
        chosen.granted = True
        try:
            chosen.loop.call_soon_threadsafe(_wake, chosen.future)
        except RuntimeError:  # its event loop is gone: nobody will use this worker
            chosen.granted = False
            _give_back(chosen.tenant)


async def hold(tenant: Tenant) -> bool:
    """Take a worker share for `tenant`, waiting in the fair queue up to
    CHECKOUT_TIMEOUT_SECONDS; False when none came."""
    loop = asyncio.get_running_loop()
    with _lock:
        if _may_take(tenant):
            _take(tenant)
            return True
        waiter = _Waiter(tenant, next(_arrivals), loop, loop.create_future())
        _waiters.append(waiter)
    try:
        async with asyncio.timeout(CHECKOUT_TIMEOUT_SECONDS):
            await waiter.future
        return True
    except TimeoutError:
        with _lock:
            if waiter.granted:  # granted as the wait ran out: it is ours
                return True
            _waiters.remove(waiter)
        return False
    except asyncio.CancelledError:
        with _lock:
            if not waiter.granted:
                _waiters.remove(waiter)
        if waiter.granted:
            let_go(tenant)
        raise


def let_go(tenant: Tenant) -> None:
    with _lock:
        _give_back(tenant)
        _serve_waiters()
