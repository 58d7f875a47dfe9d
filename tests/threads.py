"""No thread outlives its test: a pytest plugin (registered by tests/conftest.py).

A thread a test starts and leaves running keeps touching sockets, the database or shared state
after the test has passed, and whatever it raises then is reported against a later test. So
after each test's teardown, every thread that was not there before it must have ended (a short
grace covers threads that are stopping already); one still alive fails that test's teardown,
naming the thread and what it runs.

Not counted: threads started while a module-, package- or session-scoped fixture was being set
up (they live as long as that fixture, which stops them), and the process-wide pools named in
`PROCESS_POOLS`, which are started on first use and reused by every later test by design.
"""

import sys
import threading
import time

import pytest

# Name prefixes of threads that belong to the process rather than to any test.
PROCESS_POOLS = (
    # asgiref's executors behind sync_to_async (one per process, or per ThreadSensitiveContext
    # and shut down with it) and the default executor of the session's event loops.
    "ThreadPoolExecutor-",
    "asyncio_",
    # Embedded mode's task runners (mcptasks/dispatch.py) and the call log's flusher
    # (activity/recorder.py): one daemon set per process, started by the first call needing it.
    "mcp-task-",
    "call-log-flusher",
)
GRACE_SECONDS = 5.0

_fixture_threads: set[threading.Thread] = set()


def _describe(thread: threading.Thread) -> str:
    target = getattr(thread, "_target", None)
    runs = getattr(target, "__qualname__", None) or type(thread).__qualname__
    frame = sys._current_frames().get(thread.ident or -1)
    where = f" at {frame.f_code.co_filename}:{frame.f_lineno}" if frame else ""
    return f"{thread.name} (runs {runs}{where})"


def _leftovers(before: set[threading.Thread]) -> list[threading.Thread]:
    return [
        thread
        for thread in threading.enumerate()
        if thread not in before
        and thread not in _fixture_threads
        and not thread.name.startswith(PROCESS_POOLS)
    ]


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    if fixturedef.scope == "function":
        return (yield)
    before = set(threading.enumerate())
    try:
        return (yield)
    finally:
        _fixture_threads.update(set(threading.enumerate()) - before)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    item.stash[_BEFORE] = set(threading.enumerate())
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    result = yield
    before = item.stash.get(_BEFORE, set())
    deadline = time.monotonic() + GRACE_SECONDS
    for thread in _leftovers(before):
        thread.join(max(0.0, deadline - time.monotonic()))
    alive = _leftovers(before)
    _fixture_threads.difference_update([t for t in _fixture_threads if not t.is_alive()])
    if alive:
        names = "; ".join(_describe(thread) for thread in alive)
        raise AssertionError(f"{len(alive)} thread(s) outlived the test: {names}")
    return result


_BEFORE = pytest.StashKey[set[threading.Thread]]()
