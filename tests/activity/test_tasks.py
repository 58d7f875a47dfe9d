from activity import recorder, tasks
from activity.models import CallLog


def test_the_beat_tasks_drain_and_purge(call_queue, org, settings):
    settings.CALL_LOG_RETENTION_DAYS = 1
    recorder.record_call(organization_id=org.pk, method="ping", at=0.0)
    recorder.flush()

    assert tasks.drain_call_log.apply().get() == 1
    assert CallLog.objects.filter(organization=org).count() == 1
    assert tasks.purge_call_log.apply().get() == 1
    assert not CallLog.objects.filter(organization=org).exists()
