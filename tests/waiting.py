"""Waiting in tests: for a condition, with a deadline, never for a fixed time.

A fixed sleep is either too short on a loaded machine (a flaky test) or too long on a quiet one
(a slow suite); polling a condition ends as soon as it holds and fails loudly when it never does,
saying what was awaited. The only sleeps here are the pauses between polls.
"""

import asyncio
import inspect
import socket
import subprocess
import time


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.05, what: str = "condition"):
    """Poll `predicate` until it returns something truthy; that value is returned."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


async def wait_until_async(
    predicate, timeout: float = 10.0, interval: float = 0.05, what: str = "condition"
):
    """wait_until on the running event loop: `predicate` may be a coroutine function, and the
    loop keeps serving (the app under test, the mirror's refresher) between polls."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        await asyncio.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def stays(predicate, duration: float, interval: float = 0.05, what: str = "condition") -> None:
    """Check that `predicate` holds on every poll for `duration` seconds (something that must
    NOT happen cannot be waited for; it is watched for a bounded time instead)."""
    deadline = time.monotonic() + duration
    while True:
        assert predicate(), f"{what} stopped holding"
        if time.monotonic() >= deadline:
            return
        time.sleep(interval)


async def stays_async(
    predicate, duration: float, interval: float = 0.05, what: str = "condition"
) -> None:
    """stays on the running event loop (the loop keeps serving between polls)."""
    deadline = time.monotonic() + duration
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        assert value, f"{what} stopped holding"
        if time.monotonic() >= deadline:
            return
        await asyncio.sleep(interval)


def becomes(predicate, timeout: float = 10.0, interval: float = 0.05) -> bool:
    """Whether `predicate` holds within `timeout` (for callers that assert with more context)."""
    try:
        wait_until(predicate, timeout=timeout, interval=interval)
    except AssertionError:
        return False
    return True


def listening(
    port: int,
    process: subprocess.Popen | None = None,
    timeout: float = 30.0,
    what: str = "the server",
    host: str = "127.0.0.1",
) -> None:
    """Wait until `port` accepts a connection; if `process` (the server being started) exits
    first, fail at once with what it wrote to a piped stderr rather than at the deadline."""

    def accepts() -> bool:
        if process is not None and process.poll() is not None:
            said = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise AssertionError(f"{what} exited ({process.returncode}) before listening: {said}")
        try:
            socket.create_connection((host, port), timeout=0.2).close()
        except OSError:
            return False
        return True

    wait_until(accepts, timeout=timeout, interval=0.1, what=f"{what} to listen on port {port}")
