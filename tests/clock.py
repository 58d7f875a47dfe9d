"""An injected clock: a module's `time` replaced by one whose time() and monotonic() run at an
offset the test moves, so a test reaches an expiry without waiting for it."""

import time
from types import SimpleNamespace

import pytest


class Clock:
    def __init__(self):
        self.offset = 0.0

    def advance(self, seconds: float) -> None:
        self.offset += seconds

    def module(self) -> SimpleNamespace:
        """What replaces a module's `time`: the real module, moved by `offset`."""
        return SimpleNamespace(
            time=lambda: time.time() + self.offset,
            monotonic=lambda: time.monotonic() + self.offset,
            perf_counter=time.perf_counter,
            sleep=time.sleep,
        )


@pytest.fixture
def clock(monkeypatch):
    """`clock.install(module)` makes `module.time` this test's clock (undone after the test)."""
    fake = Clock()

    def install(module):
        monkeypatch.setattr(module, "time", fake.module())

    fake.install = install
    return fake
