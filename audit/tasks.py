from celery import shared_task

from . import retention


@shared_task(name="audit.tasks.purge_audit_log", ignore_result=True)
def purge_audit_log() -> int:
    return retention.purge()
