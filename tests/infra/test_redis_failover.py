"""infra/redis_failover.py: connection errors are retried until the budget is spent, once for a
command and the connects nested in it, and timeouts are not retried."""

import asyncio
import time

import pytest
import redis

from infra.redis_failover import AsyncFailoverRetry, FailoverRetry


def test_connection_errors_are_retried_until_the_time_is_spent_not_a_number_of_attempts():
    attempts = []

    def refused():
        attempts.append(time.monotonic())
        raise redis.ConnectionError("refused")

    started = time.monotonic()
    with pytest.raises(redis.ConnectionError):
        FailoverRetry(3).call_with_retry(refused, lambda error: None)
    assert 3 <= time.monotonic() - started < 3.5
    assert len(attempts) > 7  # the former six retries' attempts


def test_a_connect_retried_inside_a_commands_retry_keeps_to_the_commands_deadline():
    retry = FailoverRetry(1.0)
    sent = []

    def connect():
        raise redis.ConnectionError("refused")

    def command():  # as redis-py's: the connection's own retry around its connect
        if not sent:  # the pooled connection's reply is cut half a second in
            sent.append(1)
            time.sleep(0.5)
            raise redis.ConnectionError("reset")
        return retry.call_with_retry(connect, lambda error: None)

    started = time.monotonic()
    with pytest.raises(redis.ConnectionError):
        retry.call_with_retry(command, lambda error: None)
    # A connect loop with a budget of its own would have lasted until 1.6 s.
    assert time.monotonic() - started < 1.3


def test_a_command_answered_once_the_master_is_back_returns_its_answer():
    answers = iter([redis.ConnectionError("refused")] * 3 + ["PONG"])

    def ping():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert FailoverRetry(5).call_with_retry(ping, lambda error: None) == "PONG"


def test_a_timeout_is_not_retried():
    attempts = []

    def hung():
        attempts.append(1)
        raise redis.TimeoutError("hung")

    with pytest.raises(redis.TimeoutError):
        FailoverRetry(5).call_with_retry(hung, lambda error: None)
    assert attempts == [1]


def test_the_asyncio_retry_keeps_to_its_deadline_too():
    retry = AsyncFailoverRetry(1.0)

    async def connect():
        raise redis.ConnectionError("refused")

    async def nothing(error):
        return None

    async def command():
        return await retry.call_with_retry(connect, nothing)

    started = time.monotonic()
    with pytest.raises(redis.ConnectionError):
        asyncio.run(retry.call_with_retry(command, nothing))
    assert 1.0 <= time.monotonic() - started < 1.5
