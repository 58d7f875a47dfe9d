"""Retrying a command on a Sentinel-watched master for a span of time, not a number of attempts.

A master that died answers with connection errors (refused, reset, `MasterNotFoundError` once the
Sentinels see it down, `READONLY` from a demoted one) until the Sentinels agree it is down and
promote a replica: `down-after-milliseconds` plus the election, which is only known as a time.
A fixed number of attempts with backoff gave up after about 2 s, so with the common
`down-after-milliseconds` of 5000 every command in the window was refused although it would
have succeeded a few seconds later. These retries go on until `seconds` have passed since the
command began (REDIS_SENTINEL_FAILOVER_SECONDS), asking the Sentinels again at each attempt.

Only connection errors are retried, never timeouts: a hung master would make each attempt cost
a whole socket timeout.

redis-py nests its retries: a command's loop runs the connection's connect, which has a loop of
its own with the same retry object. Each loop starting the budget anew would multiply it, so
the outermost loop running in this thread (or asyncio task) sets the deadline and the loops
inside it keep to it. Plain imports only (no settings).
"""

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import redis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import AbstractBackoff, ExponentialBackoff
from redis.retry import Retry

T = TypeVar("T")

# When the outermost retry in progress in this thread or task gives up (time.monotonic()).
_deadline: ContextVar[float | None] = ContextVar("redis_failover_deadline", default=None)

# redis-py's "retry forever": its own loops never stop on a count (only the deadline stops them).
UNTIL_THE_DEADLINE = -1


def _backoff() -> ExponentialBackoff:
    # 0.1 s, 0.2 s, 0.4 s, then every 0.5 s: a new master is found within half a second of its
    # promotion, and the Sentinels are asked at most twice a second per waiting command.
    return ExponentialBackoff(cap=0.5, base=0.05)


def _pause(failures: int, backoff: AbstractBackoff) -> float | None:
    """Seconds to wait before the next attempt, or None when the budget is spent."""
    deadline = _deadline.get()
    left = (deadline or 0.0) - time.monotonic()
    if left <= 0:
        return None
    return min(backoff.compute(failures), left)


@contextmanager
def _budget(seconds: float) -> Iterator[None]:
    """The outermost retry in this thread or task starts the deadline; nested ones keep it."""
    token = _deadline.set(time.monotonic() + seconds) if _deadline.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _deadline.reset(token)


def _retryable(error: Exception, is_retryable: Callable[[Exception], bool] | None) -> bool:
    return is_retryable is None or is_retryable(error)


class FailoverRetry(Retry):
    """redis-py's `Retry` for the sync clients, bounded by `seconds` instead of a count."""

    def __init__(self, seconds: float):
        super().__init__(_backoff(), UNTIL_THE_DEADLINE, supported_errors=(redis.ConnectionError,))
        self.seconds = seconds

    def call_with_retry(
        self,
        do: Callable[[], T],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:
        self._backoff.reset()
        failures = 0
        with _budget(self.seconds):
            while True:
                try:
                    return do()
                except self._supported_errors as error:
                    if not _retryable(error, is_retryable):
                        raise
                    failures += 1
                    fail(*((error, failures) if with_failure_count else (error,)))
                    pause = _pause(failures, self._backoff)
                    if pause is None:
                        raise
                    time.sleep(pause)


class AsyncFailoverRetry(AsyncRetry):
    """The same for the asyncio clients."""

    def __init__(self, seconds: float):
        super().__init__(_backoff(), UNTIL_THE_DEADLINE, supported_errors=(redis.ConnectionError,))
        self.seconds = seconds

    async def call_with_retry(
        self,
        do: Callable[[], Awaitable[T]],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:
        self._backoff.reset()
        failures = 0
        with _budget(self.seconds):
            while True:
                try:
                    return await do()
                except self._supported_errors as error:
                    if not _retryable(error, is_retryable):
                        raise
                    failures += 1
                    await fail(*((error, failures) if with_failure_count else (error,)))
                    pause = _pause(failures, self._backoff)
                    if pause is None:
                        raise
                    await asyncio.sleep(pause)
