"""A warm tools/call of a static tool runs no SQL: definitions and key digests are cached."""

import asyncio
from contextlib import contextmanager

import httpx2
from django.db.backends import utils as db_utils

from getmcp.asgi import application
from tests.waiting import wait_until_async

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"message": "warm"}},
}


@contextmanager
def count_queries():
    """Counts SQL from every thread and connection, unlike CaptureQueriesContext."""
    executed = []
    original = db_utils.CursorWrapper._execute

    def counting(self, sql, *args, **kwargs):
        executed.append(sql)
        return original(self, sql, *args, **kwargs)

    db_utils.CursorWrapper._execute = counting
    try:
        yield executed
    finally:
        db_utils.CursorWrapper._execute = original


async def test_a_warm_static_tool_call_runs_no_sql(tenant, django_db_blocker):
    await _warm_calls_run_no_sql(tenant, tenant.raw, django_db_blocker)


async def test_a_warm_call_under_tool_limits_and_quotas_runs_no_sql_either(
    tenant, committed, django_db_blocker
):
    def govern():
        from accounts.models import ApiKey

        key, raw = ApiKey.issue(tenant.org, "governed", created_by=tenant.user)
        key.access = {str(tenant.server.pk): {"tools": ["echo"], "prompts": []}}
        key.limits = {"perMinute": 1000, "tools": {"echo": 1000}}
        key.save()
        tenant.org.monthly_call_quota = 1_000_000
        tenant.org.save()
        return raw

    raw = await asyncio.to_thread(committed, govern)
    await _warm_calls_run_no_sql(tenant, raw, django_db_blocker)


async def _warm_calls_run_no_sql(tenant, raw, django_db_blocker):
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {raw}",
        "host": "localhost",
    }
    transport = httpx2.ASGITransport(app=application)
    with django_db_blocker.unblock():
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            url = f"/mcp/{tenant.slug}"
            started = await http.post(url, json=INIT, headers=headers)
            assert started.status_code == 200
            headers["mcp-session-id"] = started.headers["mcp-session-id"]
            headers["mcp-protocol-version"] = "2025-11-25"
            cold = await http.post(url, json=CALL, headers=headers)
            assert cold.json()["result"]["content"][0]["text"] == "You said warm"

            with count_queries() as executed:
                for _ in range(3):
                    warm = await http.post(url, json=CALL, headers=headers)
                    assert warm.json()["result"]["content"][0]["text"] == "You said warm"
            assert executed == []

            # The counter does see SQL when a cache has to be filled again.
            from servers.snapshot import clear_cache

            clear_cache()
            with count_queries() as executed:
                await http.post(url, json=CALL, headers=headers)
            assert executed


@contextmanager
def redis_commands_of_this_task():
    """Every command this task sends to Redis (the refresher, the hub and the flushers run in
    tasks and threads of their own)."""
    from redis.asyncio.connection import AbstractConnection

    sent = []
    task = asyncio.current_task()
    original = AbstractConnection.send_packed_command

    async def counting(self, command, *args, **kwargs):
        if asyncio.current_task() is task:
            sent.append(command)
        return await original(self, command, *args, **kwargs)

    AbstractConnection.send_packed_command = counting
    try:
        yield sent
    finally:
        AbstractConnection.send_packed_command = original


async def test_a_warm_call_sends_nothing_to_redis(tenant, django_db_blocker):
    """The server's and key's generations and the session come from the process's mirror
    (gateway/pipeline/mirror.py) once its subscriber listens; a cold call still reads Redis."""
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {tenant.raw}",
        "host": "localhost",
    }
    transport = httpx2.ASGITransport(app=application)
    with django_db_blocker.unblock():
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            url = f"/mcp/{tenant.slug}"
            started = await http.post(url, json=INIT, headers=headers)
            headers["mcp-session-id"] = started.headers["mcp-session-id"]
            headers["mcp-protocol-version"] = "2025-11-25"
            with redis_commands_of_this_task() as cold:
                await http.post(url, json=CALL, headers=headers)
            assert cold  # the session was never read by this process: one round trip

            async def served_from_memory() -> bool:
                with redis_commands_of_this_task() as sent:
                    await http.post(url, json=CALL, headers=headers)
                return not sent

            await wait_until_async(
                served_from_memory,
                interval=0.05,
                what="a call served without Redis (the mirror's subscriber listening)",
            )
            with redis_commands_of_this_task() as sent:
                for _ in range(5):
                    warm = await http.post(url, json=CALL, headers=headers)
                    assert warm.json()["result"]["content"][0]["text"] == "You said warm"
            assert sent == []
