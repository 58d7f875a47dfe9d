"""The polling helpers tests wait with (tests/waiting.py): they end as soon as the condition
holds, and fail at their deadline saying what was awaited."""

import asyncio
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.waiting import becomes, listening, stays, stays_async, wait_until, wait_until_async


def counter(holds_from: int):
    """A predicate that is falsy for its first `holds_from - 1` polls, then returns the count."""
    polls = []

    def predicate():
        polls.append(1)
        return len(polls) if len(polls) >= holds_from else 0

    return predicate, polls


def test_waiting_returns_the_first_truthy_value_as_soon_as_it_comes():
    predicate, polls = counter(3)
    started = time.monotonic()
    assert wait_until(predicate, timeout=5, interval=0.01) == 3
    assert len(polls) == 3
    assert time.monotonic() - started < 1


def test_waiting_for_what_never_comes_fails_at_the_deadline_naming_it():
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"timed out after 0.2s waiting for the moon"):
        wait_until(lambda: False, timeout=0.2, interval=0.01, what="the moon")
    assert 0.2 <= time.monotonic() - started < 1


def test_an_error_raised_while_polling_is_not_swallowed():
    def broken():
        raise KeyError("gone")

    with pytest.raises(KeyError):
        wait_until(broken, timeout=5)


async def test_waiting_on_the_loop_awaits_coroutine_predicates_and_keeps_the_loop_serving():
    done = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, done.set)

    async def is_done():
        return done.is_set()

    assert await wait_until_async(is_done, timeout=5, interval=0.01) is True
    with pytest.raises(AssertionError, match="waiting for the bell"):
        await wait_until_async(lambda: False, timeout=0.1, interval=0.01, what="the bell")


def test_staying_watches_for_the_whole_time_and_fails_when_the_condition_breaks():
    started = time.monotonic()
    stays(lambda: True, 0.2, interval=0.01)
    assert time.monotonic() - started >= 0.2
    flips = iter([True, True, False])
    with pytest.raises(AssertionError, match="the quiet stopped holding"):
        stays(lambda: next(flips), 5, interval=0.01, what="the quiet")


async def test_staying_on_the_loop_fails_when_the_condition_breaks():
    broken = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, broken.set)
    with pytest.raises(AssertionError, match="the silence stopped holding"):
        await stays_async(lambda: not broken.is_set(), 5, interval=0.01, what="the silence")
    await stays_async(lambda: True, 0.05, interval=0.01)


def test_becomes_answers_whether_the_condition_came_in_time():
    predicate, _ = counter(2)
    assert becomes(predicate, timeout=5, interval=0.01)
    assert not becomes(lambda: False, timeout=0.05, interval=0.01)


def test_listening_ends_when_the_port_accepts():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    port = server.getsockname()[1]
    threading.Timer(0.1, server.listen).start()
    try:
        listening(port, timeout=5)
    finally:
        server.close()


def test_listening_fails_at_once_with_what_a_server_that_exited_said():
    unused = socket.socket()
    unused.bind(("127.0.0.1", 0))
    port = unused.getsockname()[1]
    started = time.monotonic()
    with (
        subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.exit('no port for me')"],
            stderr=subprocess.PIPE,
        ) as process,
        pytest.raises(AssertionError, match="the upstream exited .* no port for me"),
    ):
        listening(port, process, timeout=30, what="the upstream")
    unused.close()
    assert time.monotonic() - started < 10
