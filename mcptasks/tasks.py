"""Celery tasks. `run_tool` is acked only after it returns, so a message whose worker dies is
not lost; a duplicate delivery is harmless (runner.claim)."""

from getmcp.celery import app

from .dispatch import RUN_TOOL, run
from .recovery import reap


@app.task(
    name=RUN_TOOL,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def run_tool(self, task_id: str) -> str | None:
    return run(task_id, self.request.id or "")


@app.task(name="mcptasks.reap_tasks", ignore_result=True)
def reap_tasks() -> dict:
    return reap()
