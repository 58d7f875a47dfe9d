"""Per-task Redis channels: live events for listeners, and a wake-up list for a waiting worker.

Events are JSON on `mcp:task:<id>:events` (pub/sub, so any endpoint worker can relay them):
  {"type": "status", "notifications": {"2025-11-25": {...}, "2026-07-28": {...}}}
  {"type": "progress", "progress": 50, "total": 100, "message": "..."}
  {"type": "log", "level": "info", "data": ..., "logger": null}
Status events carry the ready notification for each task design, so a listener needs no SQL.
"""

import orjson

from infra import keys
from infra.redis import publish, sync_client
from mcp_protocol import versions

from .models import Task
from .wire import status_notification

CORE_ERA, EXTENSION_ERA = versions.TASKS_IN_CORE, versions.STATELESS


def events_channel(task_id: str) -> str:
    return keys.task_events(task_id)


def wake_list(task_id: str) -> str:
    return keys.task_wake(task_id)


def status_event(task: Task) -> bytes:
    return orjson.dumps(
        {
            "type": "status",
            "taskId": task.id,
            "notifications": {
                CORE_ERA: status_notification(task, CORE_ERA),
                EXTENSION_ERA: status_notification(task, EXTENSION_ERA),
            },
        }
    )


def publish_status(task: Task) -> None:
    publish(sync_client(), events_channel(task.id), status_event(task))


def wake(task_id: str) -> None:
    """Tell a worker waiting on this task to look at its row again."""
    client = sync_client()
    pipe = client.pipeline(transaction=False)
    pipe.lpush(wake_list(task_id), b"1")
    pipe.ltrim(wake_list(task_id), 0, 9)
    pipe.expire(wake_list(task_id), 3600)
    pipe.execute()
