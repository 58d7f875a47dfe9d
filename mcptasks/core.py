"""2025-11-25 core tasks: `tasks/result` blocks until the task ends and, meanwhile, puts the
task's input requests to the client the session-era way (as requests on the tasks/result stream).
"""

import asyncio

from mcp_protocol.errors import INTERNAL_ERROR, McpError
from servers.db import run as run_db

from .lifecycle import update_task, wait_for_task
from .models import Task
from .wire import core_result

WAIT_FOR = Task.TERMINAL | {Task.INPUT_REQUIRED}


async def core_task_result(
    task_id: str, organization_id: int, credential: str, ctx, *, timeout: float = 300.0
) -> dict:
    """What the original tools/call would have answered (raised as McpError when it failed).
    `ctx.request(key, method, params)` sends a request to the client and returns its answer."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        remaining = deadline - loop.time()
        task = await wait_for_task(
            task_id, organization_id, credential, timeout=max(remaining, 0), statuses=WAIT_FOR
        )
        if task.is_terminal:
            return core_result(task)
        if task.status == Task.INPUT_REQUIRED:
            for key, request in task.input_requests.items():
                answer = await ctx.request(key, request["method"], request.get("params") or {})
                await run_db(update_task, task, {key: answer})
            continue
        if remaining <= 0:
            raise McpError(INTERNAL_ERROR, "Timed out waiting for the task", {"taskId": task_id})
