"""What a Task looks like on the wire, in the two task designs MCP has had.

- 2025-11-25 (experimental core tasks): `Task {taskId, status, statusMessage?, createdAt,
  lastUpdatedAt, ttl, pollInterval?}`; `CreateTaskResult {task: Task}`; the outcome comes from
  `tasks/result`, which answers exactly what the original call would have.
- 2026-07-28 (extension io.modelcontextprotocol/tasks): `ttlMs`/`pollIntervalMs`, and the
  detailed task inlines `result` (completed), `error` (failed) or `inputRequests`
  (input_required); `CreateTaskResult` is the task itself with `resultType: "task"`.
"""

from mcp_protocol.errors import McpError
from mcp_protocol.versions import STATELESS

from .models import Task

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
CORE_STATUS_NOTIFICATION = "notifications/tasks/status"
EXTENSION_STATUS_NOTIFICATION = "notifications/tasks"


def is_extension_era(era: str) -> bool:
    return (era or "") >= STATELESS


def _timestamp(value) -> str:
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_wire(task: Task, era: str) -> dict:
    """The Task object of `tasks/get` (and of the status notification) in `era`'s form."""
    wire = {"taskId": task.id, "status": task.status}
    if task.status_message:
        wire["statusMessage"] = task.status_message
    wire["createdAt"] = _timestamp(task.created_at)
    wire["lastUpdatedAt"] = _timestamp(task.updated_at)
    if not is_extension_era(era):
        wire["ttl"] = task.ttl_ms
        wire["pollInterval"] = task.poll_interval_ms
        return wire
    wire["ttlMs"] = task.ttl_ms
    wire["pollIntervalMs"] = task.poll_interval_ms
    if task.status == Task.COMPLETED and task.result is not None:
        wire["result"] = task.result
    elif task.status == Task.FAILED and task.error is not None:
        wire["error"] = task.error
    elif task.status == Task.INPUT_REQUIRED:
        wire["inputRequests"] = task.input_requests
    return wire


def create_task_result(task: Task, era: str) -> dict:
    """The immediate answer to a task-augmented tools/call."""
    if is_extension_era(era):
        return {"resultType": "task", **task_wire(task, era)}
    return {"task": task_wire(task, era)}


def status_notification(task: Task, era: str) -> dict:
    method = EXTENSION_STATUS_NOTIFICATION if is_extension_era(era) else CORE_STATUS_NOTIFICATION
    return {"jsonrpc": "2.0", "method": method, "params": task_wire(task, era)}


def core_result(task: Task) -> dict:
    """2025-11-25 `tasks/result` of a terminal task: the call's own result (tagged with the task),
    or the JSON-RPC error it failed with raised as McpError."""
    if task.status == Task.COMPLETED:
        result = dict(task.result or {})
        result["_meta"] = {**(result.get("_meta") or {}), RELATED_TASK: {"taskId": task.id}}
        return result
    if task.status == Task.FAILED:
        error = task.error or {"code": -32603, "message": task.status_message or "Task failed"}
        raise McpError(error["code"], error["message"], error.get("data"))
    if task.status == Task.CANCELLED:
        raise McpError(-32603, "Task was cancelled", {"taskId": task.id})
    raise ValueError("core_result needs a terminal task")
