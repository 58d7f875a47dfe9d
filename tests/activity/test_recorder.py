import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from activity import recorder, stream
from activity.drain import drain_call_log
from activity.models import CallLog
from tests.waiting import becomes

from .conftest import queued


def wait_for_queue(client, length, seconds=3.0):
    becomes(lambda: stream.waiting(client) >= length, timeout=seconds)
    return stream.waiting(client)


def test_a_recorded_call_reaches_redis_by_itself_and_postgres_after_a_drain(
    call_queue, server, org
):
    recorder.record_call(
        organization_id=org.pk,
        server_id=server.pk,
        server_slug=server.slug,
        method="tools/call",
        tool="forecast",
        client_info={"name": "claude-code", "version": "2.1.0"},
        user_agent="claude-code/2.1.0",
        outcome="tool_error",
        error="city not found",
        latency_ms=12.5,
        arguments={"city": "Paris"},
        session_id="s1",
        request_id=7,
    )

    assert wait_for_queue(call_queue, 1) == 1
    assert drain_call_log() == 1
    row = CallLog.objects.get(organization=org)
    assert (row.server, row.organization, row.tool, row.outcome) == (
        server,
        org,
        "forecast",
        "tool_error",
    )
    assert (row.client_name, row.client_version) == ("claude-code", "2.1.0")
    assert row.latency_ms == 12.5
    assert row.arguments == {"city": "[redacted]"}
    assert (row.session_id, row.request_id, row.error) == ("s1", "7", "city not found")


def test_recording_a_call_runs_no_sql(call_queue, org, django_assert_num_queries):
    with django_assert_num_queries(0):
        for _ in range(50):
            recorder.record_call(organization_id=org.pk, method="tools/list")


def test_recording_a_call_does_not_wait_on_redis(call_queue, org, monkeypatch):
    real = recorder.sync_client

    def slow_redis():
        time.sleep(1.0)  # deliberate: the slowness is the subject (a Redis that answers late)
        return real()

    # However slow Redis is, only the flusher thread waits for it.
    monkeypatch.setattr(recorder, "sync_client", slow_redis)
    started = time.perf_counter()
    for _ in range(1000):
        recorder.record_call(organization_id=org.pk, method="tools/list")
    assert time.perf_counter() - started < 0.5


def test_arguments_keep_their_keys_but_lose_their_values_by_default():
    assert recorder.redact_arguments({"city": "Paris", "days": 3}) == {
        "city": "[redacted]",
        "days": "[redacted]",
    }
    assert recorder.redact_arguments(["not", "a", "dict"]) == "[redacted]"
    assert recorder.redact_arguments(None) is None


def test_opted_in_arguments_keep_values_except_under_secret_looking_keys():
    kept = recorder.redact_arguments(
        {"city": "Paris", "api_key": "abc", "nested": {"password": "x", "n": [1, {"token": "t"}]}},
        keep=True,
    )
    assert kept == {
        "city": "Paris",
        "api_key": "[redacted]",
        "nested": {"password": "[redacted]", "n": [1, {"token": "[redacted]"}]},
    }


def test_opted_in_arguments_too_large_to_keep_are_cut():
    kept = recorder.redact_arguments({"text": "x" * 50_000}, keep=True)
    assert kept["text"] == "[redacted]"
    assert "[truncated]" in kept


def test_error_texts_are_truncated_and_scrubbed_of_credentials():
    text = recorder.scrub_error(
        "upstream said 401 for Bearer abc.def-ghi with key gmcp_SECRETSECRET and gpat_tok"
    )
    assert "abc.def" not in text and "SECRETSECRET" not in text and "gpat_tok" not in text
    assert "Bearer [redacted]" in text and "gmcp_[redacted]" in text
    assert len(recorder.scrub_error("e" * 10_000)) == recorder.MAX_ERROR_CHARS


def test_plain_rows_and_rows_needing_escapes_both_arrive_storable(call_queue, org):
    # A plain ASCII row is queued as recorded; one NUL or lone surrogate anywhere, argument keys
    # included, sends the row through the escaping path, which the plain check must not skip.
    plain = {"method": "tools/call", "tool": "echo", "arguments": {"text": "hi"}}
    recorder.record_call(organization_id=org.pk, server_slug="s" * 80, **plain)
    recorder.record_call(organization_id=org.pk, method="tools/call", arguments={"a\x00b": 1})
    recorder.record_call(organization_id=org.pk, method="tools/call", arguments={"\ud800": 1})
    recorder.record_call(organization_id=org.pk, method="tools/call", user_agent="café\x00")
    recorder.record_call(organization_id=org.pk, method="tools/call", tool="t\ud800")
    recorder.record_call(organization_id=org.pk, method="tools/call", oauth_client="c\x00")
    recorder.flush()
    rows = queued(call_queue)
    assert (rows[0]["server_slug"], rows[0]["tool"]) == ("s" * 63, "echo")
    assert rows[0]["arguments"] == {"text": "[redacted]"}
    assert rows[1]["arguments"] == {"a\\u0000b": "[redacted]"}
    assert rows[2]["arguments"] == {"\\ud800": "[redacted]"}
    assert rows[3]["user_agent"] == "café\\u0000"
    assert rows[4]["tool"] == "t\\ud800"
    assert rows[5]["oauth_client"] == "c\\u0000"


def test_unknown_outcomes_and_surfaces_are_not_stored_as_they_came(call_queue, org):
    recorder.record_call(organization_id=org.pk, method="x", outcome="weird", surface="ftp")
    recorder.flush()
    row = queued(call_queue)[0]
    assert (row["outcome"], row["surface"]) == ("error", "mcp")


def test_rows_stay_buffered_while_redis_is_unreachable(call_queue, org, monkeypatch):
    unreachable = redis.Redis(
        host="127.0.0.1", port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0)
    )
    monkeypatch.setattr(recorder, "sync_client", lambda: unreachable)
    recorder._wake.clear()
    recorder.record_call(organization_id=org.pk, method="tools/list")
    with pytest.raises(redis.ConnectionError):
        recorder.flush()
    assert recorder.pending() >= 1
    monkeypatch.undo()
    recorder.flush()  # or the flusher thread got there first
    assert recorder.pending() == 0
    assert stream.waiting(call_queue) >= 1


def test_every_row_gets_its_own_uid(call_queue, org):
    for _ in range(3):
        recorder.record_call(organization_id=org.pk, method="ping")
    recorder.flush()
    uids = [row["uid"] for row in queued(call_queue)]
    assert len(set(uids)) == 3 and all(len(uid) == 32 for uid in uids)


def test_an_orderly_exit_waits_for_redis_to_take_the_buffer(call_queue, org, monkeypatch):
    real = recorder.sync_client
    unreachable = redis.Redis(
        host="127.0.0.1", port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0)
    )
    answers = iter([unreachable, unreachable])
    monkeypatch.setattr(recorder, "sync_client", lambda: next(answers, None) or real())
    recorder._wake.clear()
    recorder.record_call(organization_id=org.pk, method="ping")
    assert recorder.flush_before_exit(timeout=5.0) == 0
    assert [row["method"] for row in queued(call_queue)] == ["ping"]


def test_an_orderly_exit_gives_up_after_its_budget_and_says_how_many_rows_it_lost(
    call_queue, org, monkeypatch
):
    unreachable = redis.Redis(
        host="127.0.0.1", port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0)
    )
    monkeypatch.setattr(recorder, "sync_client", lambda: unreachable)
    monkeypatch.setattr(recorder, "_ensure_flusher", lambda: None)
    recorder.record_call(organization_id=org.pk, method="ping")
    assert recorder.flush_before_exit(timeout=0.5) == 1
    monkeypatch.undo()
    recorder.flush()
