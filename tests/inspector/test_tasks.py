"""A call that becomes a task is followed live in the open inspector: a live server, a real
Celery worker running the task, and the inspector socket open on the server; the call's event
names its task, then the task's progress and its end arrive on the same socket as they happen."""

import asyncio

from tests.gateway.endpoint.mcp_http import RawMcp
from tests.gateway.endpoint.test_tasks import (  # noqa: F401
    shared_worker,
    tasks_tenant,
    worker,
)

from .conftest import watching


async def test_a_task_calls_progress_and_end_arrive_live(
    asgi_server,
    tasks_tenant,  # noqa: F811
    worker,  # noqa: F811
    owner_cookie,
):
    slug = tasks_tenant.tasks_slug
    async with watching(asgi_server, slug, owner_cookie) as watch:

        def start() -> str:
            client = RawMcp(asgi_server.mcp_url(slug), key=tasks_tenant.raw)
            client.initialize({})
            created = client.call(
                "tools/call", {"name": "stepping", "arguments": {}, "task": {"ttl": 60000}}
            )
            return created["result"]["task"]["taskId"]

        task_id = await asyncio.to_thread(start)
        event = await watch.event(lambda e: e["method"] == "tools/call")
        assert (event["target"], event["taskId"]) == ("stepping", task_id)
        updates = []
        while not any(u.get("status") == "completed" for u in updates):
            message = await watch.message(timeout=30)
            if message["type"] == "task":
                updates.append(message)
    assert {u["taskId"] for u in updates} == {task_id}
    progress = [u for u in updates if u["kind"] == "progress"]
    assert progress and (progress[0]["progress"], progress[0]["total"]) == (1, 2)
    assert progress[0]["message"] == "Halfway"
    assert updates.index(progress[0]) < len(updates) - 1  # progress came before the end
