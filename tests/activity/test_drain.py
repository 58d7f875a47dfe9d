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
