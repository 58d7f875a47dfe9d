"""Monthly call counts of organizations without a quota: summed in the process, pushed to Redis
with the call log, and kept for the next push when Redis does not take them."""

import redis

from activity import recorder, stream, usage_counts
from infra.redis import sync_client
from tests.conftest import free_port


def test_counts_are_summed_per_counter_and_pushed_with_the_call_log_flush():
    client = sync_client()
    client.delete("mcp:q:org:test-a:202601", "mcp:q:org:test-b:202601")
    usage_counts.take()
    usage_counts.count(("mcp:q:org:test-a:202601", 1, 3600))
    usage_counts.count(("mcp:q:org:test-a:202601", 2, 3600))
    usage_counts.count(("mcp:q:org:test-b:202601", 1, 3600))
    recorder.flush()
    assert int(client.get("mcp:q:org:test-a:202601")) == 3
    assert int(client.get("mcp:q:org:test-b:202601")) == 1
    assert 0 < client.ttl("mcp:q:org:test-a:202601") <= 3600
    assert usage_counts.take() == {}
    client.delete("mcp:q:org:test-a:202601", "mcp:q:org:test-b:202601")


def test_counts_redis_did_not_take_are_kept_for_the_next_push(monkeypatch):
    import pytest

    usage_counts.take()
    usage_counts.count(("mcp:q:org:test-c:202601", 4, 3600))
    unreachable = redis.Redis(port=free_port(), socket_connect_timeout=0.5)
    monkeypatch.setattr(recorder, "sync_client", lambda: unreachable)
    with pytest.raises(redis.ConnectionError):
        recorder.flush()
    assert usage_counts.take() == {"mcp:q:org:test-c:202601": (4, 3600)}


def test_a_failed_push_of_counts_loses_none_of_the_rows_pushed_with_them(monkeypatch):
    """Rows go first; counts Redis refuses after them are given back, the rows stay pushed."""
    import pytest

    real = sync_client()
    before = real.xlen(stream.STREAM_KEY)
    recorder.flush()
    usage_counts.take()
    recorder.record_call(organization_id=1, method="tools/call", tool="echo")
    usage_counts.count(("mcp:q:org:test-d:202601", 1, 3600))

    def refuse(client, counts):
        raise redis.ConnectionError("refused for the test")

    monkeypatch.setattr(usage_counts, "push", refuse)
    with pytest.raises(redis.ConnectionError):
        recorder.flush()
    assert recorder.pending() == 0 and real.xlen(stream.STREAM_KEY) >= before + 1
    assert usage_counts.take() == {"mcp:q:org:test-d:202601": (1, 3600)}
