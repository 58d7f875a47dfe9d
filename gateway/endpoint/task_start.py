"""Starting a task from a tools/call: its row stored on the database thread, then its message
sent to the broker on a thread of its own.

The send may wait out a failover of the broker's Redis (REDIS_SENTINEL_FAILOVER_SECONDS:
mcptasks/dispatch.py). On the database thread, which every MCP call of the process shares
(servers/db.py), that wait held up every other call's queries, and a send that outlasted
MCP_DATABASE_TIMEOUT_SECONDS was answered as a database outage while it went on. A send that
gives up ends the task, so the reaper never starts one its creator was told did not start.
"""

import asyncio
from typing import Any

from mcp_protocol.errors import INTERNAL_ERROR, McpError
from mcptasks import dispatch, lifecycle
from mcptasks.models import Task
from servers.compiled.snapshot import CompiledTool
from servers.db import run as run_db

from ..pipeline.served import Served


def _served_version(served: Served) -> str:
    return str(served.snapshot.server_info.get("version") or "")


def _store(
    served: Served,
    tool: CompiledTool,
    params: dict[str, Any],
    *,
    era: str,
    capabilities: dict[str, Any],
    ttl: int | None,
    answers: dict[str, Any] | None,
) -> Task:
    return lifecycle.create_task(
        served.snapshot,
        tool.name,
        params.get("arguments"),
        served.caller,
        ttl,
        protocol_version=era,
        client_capabilities=capabilities,
        server_version=_served_version(served),
        input_responses=answers or {},
        send=False,
    )


async def begin_task(
    served: Served,
    tool: CompiledTool,
    params: dict[str, Any],
    *,
    era: str,
    capabilities: dict[str, Any],
    ttl: int | None = None,
    answers: dict[str, Any] | None = None,
) -> Task:
    task: Task = await run_db(
        _store, served, tool, params, era=era, capabilities=capabilities, ttl=ttl, answers=answers
    )
    try:
        await asyncio.to_thread(dispatch.send, task.id)
    except dispatch.NotQueued:
        await run_db(dispatch.fail_unqueued, task.id)
        raise McpError(
            INTERNAL_ERROR, dispatch.QUEUE_DOWN, {"reason": "task-queue-unavailable"}
        ) from None
    return task
