import orjson

from activity import recorder
from activity.drain import drain_call_log
from activity.models import CallLog
from servers.models import Server


def test_a_drain_writes_at_most_max_rows_and_leaves_the_rest_queued(call_queue, server, org):
    for _ in range(7):
        recorder.record_call(organization_id=org.pk, server_id=server.pk, method="tools/list")
    recorder.flush()

    assert drain_call_log(max_rows=5) == 5
    assert call_queue.llen(recorder.CALL_LOG_KEY) == 2
    assert drain_call_log() == 2
    assert drain_call_log() == 0
    assert CallLog.objects.count() == 7


def test_calls_of_a_deleted_server_are_kept_without_it(call_queue, org):
    gone = Server.objects.create(organization=org, slug="gone", name="gone")
    recorder.record_call(
        organization_id=org.pk, server_id=gone.pk, server_slug="gone", method="tools/list"
    )
    recorder.flush()
    gone.delete()

    assert drain_call_log() == 1
    row = CallLog.objects.get()
    assert (row.server_id, row.server_slug) == (None, "gone")


def test_calls_of_a_deleted_organization_are_dropped(call_queue, outsider_org):
    recorder.record_call(organization_id=outsider_org.pk, method="tools/list")
    recorder.flush()
    outsider_org.delete()

    assert drain_call_log() == 0
    assert not CallLog.objects.exists()


def test_unreadable_rows_are_dropped_and_good_ones_kept(call_queue, org):
    call_queue.rpush(recorder.CALL_LOG_KEY, b"not json", orjson.dumps({"at": 1}))
    recorder.record_call(organization_id=org.pk, method="ping")
    recorder.flush()

    assert drain_call_log() == 1
    assert CallLog.objects.get().method == "ping"


def test_a_row_postgres_refuses_is_dropped_without_losing_its_batch(call_queue, org):
    recorder.record_call(organization_id=org.pk, method="ping")
    recorder.flush()
    bad = orjson.loads(call_queue.lindex(recorder.CALL_LOG_KEY, 0))
    bad["method"] = "x" * 500  # longer than the column
    call_queue.rpush(recorder.CALL_LOG_KEY, orjson.dumps(bad))
    recorder.record_call(organization_id=org.pk, method="pong")
    recorder.flush()

    assert drain_call_log() == 2
    assert sorted(CallLog.objects.values_list("method", flat=True)) == ["ping", "pong"]
    assert call_queue.llen(recorder.CALL_LOG_KEY) == 0


def test_a_malformed_client_address_is_not_stored(call_queue, org):
    recorder.record_call(organization_id=org.pk, method="ping", client_ip="unix:/tmp/sock")
    recorder.record_call(organization_id=org.pk, method="pong", client_ip="::1")
    recorder.flush()
    drain_call_log()
    assert dict(CallLog.objects.values_list("method", "client_ip")) == {"ping": None, "pong": "::1"}
