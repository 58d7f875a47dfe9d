"""The Redis clients' deadlines: an ordinary reply is bounded by the socket timeout, a blocking
command gets the block time it asked for on top (it must not time out early)."""

import math
import time

import pytest
from django.conf import settings

from infra.redis import async_client, blocking_seconds, is_embedded


@pytest.mark.parametrize(
    ("args", "seconds"),
    [
        (("BLPOP", "a", "b", 5), 5.0),
        ((b"brpop", "a", 0), math.inf),
        (("BLMPOP", 2.5, 1, "a", "LEFT"), 2.5),
        (("XREAD", "COUNT", 10, "BLOCK", 1500, "STREAMS", "s", "$"), 1.5),
        (("XREAD", "STREAMS", "s", "$"), None),
        (("GET", "a"), None),
        ((), None),
    ],
)
def test_it_reads_how_long_a_command_asks_the_server_to_block(args, seconds):
    assert blocking_seconds(args) == seconds


@pytest.mark.skipif(is_embedded(), reason="needs a real Redis")
async def test_a_blocking_command_longer_than_the_socket_timeout_waits_its_full_time(
    settings_override,
):
    settings_override(REDIS_SOCKET_TIMEOUT_SECONDS=0.2)
    client = async_client()
    started = time.monotonic()
    assert await client.blpop(["faults:never-pushed"], timeout=1) is None
    assert await client.xread({"faults:never-added": "$"}, block=600) in ([], {})
    assert time.monotonic() - started >= 1.5
    await client.aclose()


@pytest.fixture
def settings_override():
    saved = {}

    def override(**values):
        for name, value in values.items():
            saved.setdefault(name, getattr(settings, name))
            setattr(settings, name, value)

    yield override
    for name, value in saved.items():
        setattr(settings, name, value)
