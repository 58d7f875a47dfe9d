"""infra/broker_publish.py: a publish's retries pause between attempts and end, with the last
connection error, once the failover budget is spent; and infra/broker.py's Sentinel transport
stays the one in use when kombu moves to the URL's next Sentinel. tests/scale/
test_redis_sentinel.py shows both with a real failover and everything dead."""

import time

import pytest
from kombu import Connection
from kombu.transport import resolve_transport

import infra.broker
from infra.broker_publish import PAUSE_SECONDS, publish_retry_policy


def test_a_retry_kombu_would_take_at_once_waits_a_pause_first():
    errback = publish_retry_policy(seconds=5)["errback"]
    started = time.monotonic()
    errback(ConnectionError("refused"), 0)
    assert time.monotonic() - started == pytest.approx(PAUSE_SECONDS, abs=0.1)


def test_a_retry_kombu_pauses_before_itself_is_not_paused_twice():
    errback = publish_retry_policy(seconds=5)["errback"]
    started = time.monotonic()
    errback(ConnectionError("refused"), PAUSE_SECONDS)
    assert time.monotonic() - started < 0.05


def test_the_retries_end_with_the_last_error_once_the_seconds_have_passed():
    errback = publish_retry_policy(seconds=0.3)["errback"]
    refused = ConnectionError("refused")
    started = time.monotonic()
    with pytest.raises(ConnectionError) as ended:
        for _ in range(100):
            errback(refused, 0)
    assert ended.value is refused
    assert 0.3 <= time.monotonic() - started < 0.3 + PAUSE_SECONDS


def test_the_count_of_retries_is_only_a_backstop_behind_the_seconds():
    policy = publish_retry_policy(seconds=10)
    assert policy["max_retries"] * PAUSE_SECONDS > 10


def test_moving_to_the_urls_next_sentinel_keeps_the_platforms_transport():
    connection = Connection(
        "sentinel://127.0.0.1:1;sentinel://127.0.0.1:2", transport=infra.broker.SentinelTransport
    )
    connection.maybe_switch_next()
    assert connection.hostname == "127.0.0.1" and connection.port == 2
    assert resolve_transport(connection.transport_cls) is infra.broker.SentinelTransport
