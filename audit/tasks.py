from celery import shared_task

from . import checkpoints, retention


@shared_task(name="audit.tasks.purge_audit_log", ignore_result=True)
def purge_audit_log() -> int:
    return retention.purge()


@shared_task(name="audit.tasks.checkpoint_audit_log", ignore_result=True)
def checkpoint_audit_log() -> str | None:
    path = checkpoints.export()
    return str(path) if path else None
