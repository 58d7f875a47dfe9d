"""A call run as a task on a real Celery worker acts through the caller's connected account on
the worker; its call-log row, written when the call was submitted, names that connection as a
direct call's row does (a 2025-11-25 core task, a 2026-07-28 extension task and a long call),
and the dashboard's call log shows it."""

import asyncio
import contextlib

import pytest

from servers.definition import import_definition
from tests.connections.conftest import SESSION, client, definition, person_of, text_of
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.gateway.endpoint.test_tasks import (  # noqa: F401 (fixtures used here too)
    Modern,
    core_poll,
    done,
    shared_worker,
    worker,
)
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

# A long call waits this long for its task: far longer than the task takes.
WAIT_SECONDS = 30


@pytest.fixture
def tasks_server(committed, world, oidc_provider, unique):
    """The world's tools on a second server of its organization, each allowed to run as a task,
    and a call from a client without tasks waiting for its task (a long call)."""

    def make():
        made = definition(f"conn-tasks-{unique}", oidc_provider.api)
        made["agents"] = {"longCalls": {"waitSeconds": WAIT_SECONDS}}
        for tool in made["tools"]:
            tool["execution"] = {"taskSupport": "optional"}
        return import_definition(made, world.org)

    return committed(make)


def core_task(live, slug: str, key: str) -> dict:
    """my_items as a 2025-11-25 task in a session: the task's end, and its result."""
    session = RawMcp(live.mcp_url(slug), key=key)
    try:
        session.initialize({})
        created = session.call("tools/call", {"name": "my_items", "arguments": {}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        assert core_poll(session, task_id, done, timeout=60)["status"] == "completed"
        return session.call("tasks/result", {"taskId": task_id})["result"]
    finally:
        session.http.close()


def extension_task(live, slug: str, key: str) -> dict:
    """my_items as a 2026-07-28 extension task: its end, with its result."""
    modern = Modern(live.mcp_url(slug), key)
    try:
        created = modern.result("tools/call", {"name": "my_items", "arguments": {}})
        assert created["resultType"] == "task", created
        ended = modern.poll(created["taskId"], done, timeout=60)
        assert ended["status"] == "completed", ended
        return ended["result"]
    finally:
        modern.http.close()


def logged_task_calls(slug: str) -> list[tuple[str, str]]:
    """(tool, connection) of the server's tools/call rows, once three are stored and each names
    a connection or the wait is over (the drain runs here as the beat would; the worker's part
    comes after the row, from another process)."""
    from activity.drain import drain_call_log
    from activity.models import CallLog

    def rows() -> list[tuple[str, str]]:
        drain_call_log()
        calls = CallLog.objects.filter(server_slug=slug, method="tools/call")
        return list(calls.values_list("tool", "connection"))

    def named() -> bool:
        found = rows()
        return len(found) == 3 and all(connection for _, connection in found)

    # Not named in time: the caller's assertion shows what the rows say instead.
    with contextlib.suppress(AssertionError):
        wait_until(named, timeout=30, interval=0.5, what="the task calls' connections")
    return rows()


async def test_a_call_run_as_a_task_names_in_the_call_log_the_connection_its_worker_used(
    live,
    world,
    tasks_server,
    oidc_provider,
    chromium,
    worker,  # noqa: F811 (the fixture imported above)
):
    # Ada connects her account on a direct call to the world's server.
    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    async with client(live, world.server.slug, world.ada_key, SESSION, ada) as mcp:
        assert "Ada's private note" in text_of(await mcp.call_tool("my_items", {}))
    assert len(ada.asked) == 1

    slug = tasks_server.slug
    # The worker runs each call with her token: each answer holds what only she can see.
    core = await asyncio.to_thread(core_task, live, slug, world.ada_key)
    assert "Ada's private note" in core["content"][0]["text"]
    extension = await asyncio.to_thread(extension_task, live, slug, world.ada_key)
    assert "Ada's private note" in extension["content"][0]["text"]
    async with client(live, slug, world.ada_key, SESSION) as mcp:
        long = await mcp.call_tool("my_items", {})
    assert "Ada's private note" in text_of(long)
    # Answered within the wait by the task it became, not handed off.
    assert "io.modelcontextprotocol/related-task" in (long.meta or {})
    assert "getmcp/handle" not in (long.meta or {})
    assert len(ada.asked) == 1

    # One row per call, written at its submission, naming the connection its worker used.
    logged = await asyncio.to_thread(logged_task_calls, slug)
    assert sorted(logged) == [("my_items", "corp")] * 3
    # Her browser, signed in to getmcp when she connected, shows it in the dashboard's call log.
    await ada.page.goto(f"{live.url}/calls/?server={slug}")
    shown = ada.page.locator("[data-call-connection]")
    assert await shown.all_inner_texts() == ["through corp"] * 3
