from celery import shared_task

from . import drain, retention


@shared_task(name="activity.tasks.drain_call_log", ignore_result=True)
def drain_call_log(max_rows: int = 5000) -> int:
    return drain.drain_call_log(max_rows)


@shared_task(name="activity.tasks.purge_call_log", ignore_result=True)
def purge_call_log() -> int:
    return retention.purge_call_log()
