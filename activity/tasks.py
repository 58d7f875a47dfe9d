from celery import shared_task

from . import drain, retention

# Under beat's 5 s period, so runs never pile up behind each other.
DRAIN_SECONDS = 4.0


@shared_task(name="activity.tasks.drain_call_log", ignore_result=True)
def drain_call_log(max_rows: int = 5000) -> int:
    return drain.drain_for(DRAIN_SECONDS, batch=max_rows)


@shared_task(name="activity.tasks.purge_call_log", ignore_result=True)
def purge_call_log() -> int:
    return retention.purge_call_log()
