import orjson
import pytest

from activity import recorder, stream
from activity.drain import drain_call_log, drain_everything, drain_for
from activity.models import CallLog
from servers.models import Server

from .conftest import queued


def methods_of(org) -> list[str]:
    """The methods of the calls stored for `org` (other tests' committed rows stay)."""
    return sorted(CallLog.objects.filter(organization=org).values_list("method", flat=True))


def test_a_drain_writes_at_most_max_rows_and_leaves_the_rest_queued(call_queue, server, org):
    for _ in range(7):
        recorder.record_call(organization_id=org.pk, server_id=server.pk, method="tools/list")
    recorder.flush()

    assert drain_call_log(max_rows=5) == 5
    assert stream.waiting(call_queue) == 2
    assert drain_call_log() == 2
    assert drain_call_log() == 0
    assert CallLog.objects.filter(organization=org).count() == 7


def test_one_drain_run_stores_batch_after_batch_until_nothing_waits(call_queue, server, org):
    for _ in range(12):
        recorder.record_call(organization_id=org.pk, server_id=server.pk, method="tools/list")
    recorder.flush()

    assert drain_for(60, batch=5) == 12
    assert stream.waiting(call_queue) == 0
    assert CallLog.objects.filter(organization=org).count() == 12


def test_a_drain_run_stops_at_its_time_budget_and_leaves_the_rest_queued(call_queue, server, org):
    for _ in range(12):
        recorder.record_call(organization_id=org.pk, server_id=server.pk, method="tools/list")
    recorder.flush()

    # A budget already spent: one batch, then it returns.
    assert drain_for(0, batch=5) == 5
    assert stream.waiting(call_queue) == 7


def test_calls_of_a_deleted_server_are_kept_without_it(call_queue, org):
    gone = Server.objects.create(organization=org, slug="gone", name="gone")
    recorder.record_call(
        organization_id=org.pk, server_id=gone.pk, server_slug="gone", method="tools/list"
    )
    recorder.flush()
    gone.delete()

    assert drain_call_log() == 1
    row = CallLog.objects.get(organization=org)
    assert (row.server_id, row.server_slug) == (None, "gone")


def test_calls_of_a_deleted_organization_are_dropped(call_queue, outsider_org):
    recorder.record_call(organization_id=outsider_org.pk, method="tools/list")
    recorder.flush()
    dropped = outsider_org.pk
    outsider_org.delete()

    assert drain_call_log() == 0
    assert not CallLog.objects.filter(organization_id=dropped).exists()


def test_unreadable_rows_are_dropped_and_good_ones_kept(call_queue, org):
    call_queue.xadd(stream.STREAM_KEY, {stream.FIELD: b"not json"})
    call_queue.xadd(stream.STREAM_KEY, {stream.FIELD: orjson.dumps({"at": 1})})
    call_queue.xadd(stream.STREAM_KEY, {b"other": b"field"})
    recorder.record_call(organization_id=org.pk, method="ping")
    recorder.flush()

    assert drain_call_log() == 1
    assert CallLog.objects.get(organization=org).method == "ping"


def test_a_row_postgres_refuses_is_dropped_without_losing_its_batch(call_queue, org):
    recorder.record_call(organization_id=org.pk, method="ping")
    recorder.flush()
    bad = {**queued(call_queue)[0], "uid": "0" * 32}
    bad["method"] = "x" * 500  # longer than the column
    stream.append(call_queue, [bad])
    recorder.record_call(organization_id=org.pk, method="pong")
    recorder.flush()

    assert drain_call_log() == 2
    assert methods_of(org) == ["ping", "pong"]
    assert stream.waiting(call_queue) == 0


def test_a_malformed_client_address_is_not_stored(call_queue, org):
    recorder.record_call(organization_id=org.pk, method="ping", client_ip="unix:/tmp/sock")
    recorder.record_call(organization_id=org.pk, method="pong", client_ip="::1")
    recorder.flush()
    drain_call_log()
    stored = CallLog.objects.filter(organization=org).values_list("method", "client_ip")
    assert dict(stored) == {"ping": None, "pong": "::1"}


def test_rows_stay_queued_when_postgres_fails_and_the_next_drain_stores_them(
    call_queue, org, monkeypatch
):
    from django.db import OperationalError

    from activity import drain

    for method in ("a", "b", "c"):
        recorder.record_call(organization_id=org.pk, method=method)
    recorder.flush()

    def postgres_down(rows):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(drain, "_store", postgres_down)
    for _ in range(3):
        with pytest.raises(OperationalError):
            drain_call_log()
    assert stream.waiting(call_queue) == 3
    monkeypatch.undo()

    assert drain_call_log() == 3
    assert methods_of(org) == ["a", "b", "c"]
    assert stream.waiting(call_queue) == 0


def test_a_batch_stored_but_not_acknowledged_is_not_stored_twice(call_queue, org, monkeypatch):
    for method in ("a", "b"):
        recorder.record_call(organization_id=org.pk, method=method)
    recorder.flush()

    def killed_before_ack(client, entry_ids):
        raise ConnectionError("the worker died between the commit and the acknowledgement")

    monkeypatch.setattr(stream, "settle", killed_before_ack)
    with pytest.raises(ConnectionError):
        drain_call_log()
    assert CallLog.objects.filter(organization=org).count() == 2
    monkeypatch.undo()

    assert drain_call_log() == 2  # the same rows, read again from the pending list
    assert CallLog.objects.filter(organization=org).count() == 2
    assert stream.waiting(call_queue) == 0


def test_rows_pushed_twice_by_the_recorder_are_stored_once(call_queue, org):
    recorder.record_call(organization_id=org.pk, method="ping")
    recorder.flush()
    stream.append(call_queue, queued(call_queue))  # a push retried after a lost reply

    drain_call_log()
    assert CallLog.objects.filter(organization=org).count() == 1


def test_a_redis_that_lost_the_stream_and_its_group_still_drains(call_queue, org):
    recorder.record_call(organization_id=org.pk, method="before")
    recorder.flush()
    drain_call_log()
    call_queue.delete(stream.STREAM_KEY)  # a Redis restarted without its data

    recorder.record_call(organization_id=org.pk, method="after")
    recorder.flush()
    assert drain_call_log() == 1
    assert methods_of(org) == ["after", "before"]


def test_draining_everything_goes_on_until_nothing_waits(call_queue, org):
    for _ in range(7):
        recorder.record_call(organization_id=org.pk, method="ping")
    recorder.flush()

    assert drain_everything(batch=3) == 7
    assert stream.waiting(call_queue) == 0
    assert CallLog.objects.filter(organization=org).count() == 7


def test_reading_a_stream_that_was_never_written_finds_nothing_on_fakeredis_too():
    # Embedded mode drains every few seconds before the first call creates the stream; fakeredis
    # words the missing-group error differently from Redis, and that must not fail the drain.
    import fakeredis

    client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    assert stream.read(client, 10) == []
