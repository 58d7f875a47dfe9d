"""getmcp on a Sentinel-watched Redis (one master, one replica, three Sentinels:
tests/scale/redis_sentinel.py) with `REDIS_URL=sentinel://...` and `REDIS_SENTINEL_MASTER`: a
live server and a real Celery worker keep the platform's state there, and the broker and the
Channels layer default to the same Sentinels (kombu's and channels_redis's Sentinel clients).

Then the master is killed under load: after the Sentinels promote the replica, calls go on, no
acknowledged call-log row is lost, keys revoked just before stay refused, and a task that was
running completes.

And on Sentinels as slow to fail over as a production's (`down-after-milliseconds` 4000, longer
than the 2 s the clients' retries used to last): what is sent just after the master dies waits
for the promoted replica instead of failing (REDIS_SENTINEL_FAILOVER_SECONDS)."""

import asyncio
import os
import time

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from infra.redis import async_standalone, sync_standalone
from tests.celery_workers import database_url_for_workers, running_workers, wait_until
from tests.conftest import LiveServer
from tests.faults.harness import REVOKED_KEY, SEED_TENANT, django_script, mcp_call
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import stays

from .redis_sentinel import MASTER_NAME, RedisSentinelForTests
from .test_redis_cluster import DRAIN, REVOKE, STORED, Load, answer_of

SLOW_TASK = {
    "name": "slow_task",
    "description": "Works a while, then answers.",
    "inputSchema": {"type": "object", "properties": {}},
    "execution": {"taskSupport": "optional"},
    "kind": "workflow",
    "config": {
        "steps": [
            {"sleep": {"ms": 3000}},
            {"return": {"content": [{"type": "text", "text": "task done"}]}},
        ]
    },
}
# The faults harness's tenant, with a task tool beside its echo tool.
SEED = SEED_TENANT.replace('"tools": [{', f'"tools": [{SLOW_TASK!r}, {{')
# A message through the Channels layer (the live inspector's), which channels_redis sends
# through the Sentinels' master: received back only if that layer reached it.
CHANNEL_ROUND_TRIP = """
import asyncio
from channels.layers import get_channel_layer

async def round_trip():
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "probe", "text": "through the sentinel"})
    received = await asyncio.wait_for(layer.receive(channel), 10)
    await layer.flush()
    return received["text"]

result = asyncio.run(round_trip())
"""


# A production Sentinel waits 5000 ms or more before it calls a master down (Redis's own default
# is 30000); the Sentinels here 4000 ms, past the 2 s the clients' retries lasted when they were
# a number of attempts, and below REDIS_SENTINEL_FAILOVER_SECONDS with the election on top.
SLOW_DOWN_AFTER_MS = 4000

REAP_UNCLAIMED = "from mcptasks.recovery import reap\nresult = reap(queue_patience=0)['requeued']"


@pytest.fixture(scope="module")
def watched_redis():
    watched = RedisSentinelForTests().start()
    yield watched
    watched.close()


@pytest.fixture
def slow_sentinels():
    watched = RedisSentinelForTests(down_after_ms=SLOW_DOWN_AFTER_MS).start()
    yield watched
    watched.close()


@pytest.fixture(scope="module")
def sentinel_env(watched_redis, live_database):
    return {
        "DATABASE_URL": database_url_for_workers(),
        **watched_redis.env(),
        "CALL_LOG_FLUSH_SECONDS": "0.2",
        "SECURITY_RECHECK_SECONDS": "1",
    }


@pytest.fixture(scope="module")
def on_sentinel(sentinel_env):
    def run(code: str, timeout: float = 120):
        return django_script(
            code,
            database_url=sentinel_env["DATABASE_URL"],
            redis_url=sentinel_env["REDIS_URL"],
            extra_env=sentinel_env,
            timeout=timeout,
        )

    return run


@pytest.fixture(scope="module")
def web(sentinel_env, live_database):
    server = LiveServer(live_database, extra_env=sentinel_env)
    yield server
    if server.process.poll() is None:
        server.stop()


@pytest.fixture(scope="module")
def worker(sentinel_env, live_database, tmp_path_factory):
    with running_workers(tmp_path_factory.mktemp("sentinel-workers")) as start:
        yield start(env=sentinel_env, concurrency=2)


@pytest.fixture
def tenant(on_sentinel):
    seeded = on_sentinel(SEED)
    assert SEED != SEED_TENANT
    return seeded


def wait_until_stored(on_sentinel, slug: str, expected: int, timeout: float = 60) -> dict:
    last: dict = {}

    def done():
        last.update(on_sentinel(DRAIN + STORED.format(slug=slug)))
        return dict(last) if last["rows"] >= expected and last["waiting"] == 0 else None

    try:
        return wait_until(done, timeout=timeout, interval=0.5, what=f"{expected} stored rows")
    except AssertionError as failed:
        raise AssertionError(f"{failed}; last seen: {last}") from None


def start_task(client: RawMcp) -> str:
    created = client.call(
        "tools/call", {"name": "slow_task", "arguments": {}, "task": {"ttl": 120000}}
    )
    return created["result"]["task"]["taskId"]


def wait_for_result(client: RawMcp, task_id: str, timeout: float = 60) -> dict:
    last: dict = {}

    def completed():
        try:
            answer = client.call("tasks/get", {"taskId": task_id})
        except Exception as failed:  # noqa: BLE001 - the server may answer 503 mid-failover
            last["answer"] = repr(failed)
            return False
        last["answer"] = answer
        return answer.get("result", {}).get("status") == "completed"

    try:
        wait_until(completed, timeout=timeout, interval=0.5, what="the task to complete")
    except AssertionError as failed:
        raise AssertionError(f"{failed}; tasks/get last answered {last.get('answer')}") from None
    return client.call("tasks/result", {"taskId": task_id})


async def test_the_python_sdk_lists_and_calls_tools_through_the_sentinels(web, tenant):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {tenant['key']}"})
    async with Client(
        streamable_http_client(web.mcp_url(tenant["slug"]), http_client=http), mode="legacy"
    ) as client:
        tools = await client.list_tools()
        assert {"echo", "slow_task"} <= {tool.name for tool in tools.tools}
        for number in range(5):
            echoed = await client.call_tool("echo", {"message": f"call {number}"})
            assert echoed.content[0].text == f"You said call {number}"


def test_a_task_completes_and_the_call_log_drains_through_the_sentinels(
    web, worker, tenant, on_sentinel
):
    client = RawMcp(web.mcp_url(tenant["slug"]), key=tenant["key"])
    client.initialize()
    task_id = start_task(client)
    result = wait_for_result(client, task_id)
    assert result["result"]["content"] == [{"type": "text", "text": "task done"}]
    for _ in range(3):
        assert "result" in client.call(
            "tools/call", {"name": "echo", "arguments": {"message": "x"}}
        )
    state = wait_until_stored(on_sentinel, tenant["slug"], 3)
    assert state["rows"] == state["uids"] >= 3


def test_the_channels_layer_reaches_the_master_through_the_sentinels(on_sentinel):
    assert on_sentinel(CHANNEL_ROUND_TRIP) == "through the sentinel"


def test_a_revoked_key_is_refused_through_the_sentinels(web, tenant, on_sentinel):
    key = tenant["spare_keys"][0]
    assert "result" in answer_of(mcp_call(web.url, tenant["slug"], key))
    on_sentinel(REVOKE.format(raws=[key]))
    wait_until(
        lambda: mcp_call(web.url, tenant["slug"], key).status_code == REVOKED_KEY,
        timeout=5,
        what="the revoked key to be refused",
    )


def test_calls_continue_after_the_master_is_killed_with_no_row_lost_and_no_task_stuck(
    web, worker, tenant, on_sentinel, watched_redis
):
    url, slug = web.url, tenant["slug"]
    doomed = tenant["spare_keys"]
    for key in doomed:  # each warmed, so every cache holds it
        assert "result" in answer_of(mcp_call(url, slug, key))
    tasks = RawMcp(web.mcp_url(slug), key=tenant["key"])
    tasks.initialize()
    with Load(url, slug, tenant["key"]) as load:
        wait_until(lambda: load.acknowledged >= 50, timeout=30, what="calls under load")
        on_sentinel(REVOKE.format(raws=doomed))
        running = start_task(tasks)  # sleeping in the worker through the failover
        killed_at = time.monotonic()
        heal = watched_redis.kill_master_and_wait_for_promotion()
        before = load.acknowledged
        wait_until(lambda: load.acknowledged >= before + 50, timeout=30, what="calls again")
    failing = max(load.failures_at) - killed_at if load.failures_at else 0.0
    stall, answering_again = load.stalled_after(killed_at)
    print(
        f"\nthe Sentinels promoted the replica {heal:.2f} s after the master was killed; "
        f"calls answered again {answering_again:.2f} s after the kill (longest wait between "
        f"two answers {stall:.2f} s); {load.failed} calls failed (the last {failing:.2f} s "
        f"after the kill), {load.acknowledged} acknowledged"
    )
    state = wait_until_stored(on_sentinel, slug, load.acknowledged)
    assert state["rows"] == state["uids"] >= load.acknowledged, state

    # A dispatch the killed master acknowledged but had not yet passed to its replica is lost
    # with it. The task's row in Postgres is what counts: beat's reaper
    # dispatches again a task no run has claimed after MCP_TASK_QUEUE_PATIENCE_SECONDS. Run it
    # now without the patience, as beat would later; a task already claimed is not touched.
    requeued = on_sentinel(REAP_UNCLAIMED)
    print(f"the reaper dispatched {requeued} unclaimed task(s) again")
    result = wait_for_result(tasks, running)
    assert result["result"]["content"] == [{"type": "text", "text": "task done"}]

    # Past the change log's recheck (SECURITY_RECHECK_SECONDS=1), every revoked key stays out.
    def all_refused() -> bool:
        return all(mcp_call(url, slug, key).status_code == REVOKED_KEY for key in doomed)

    stays(all_refused, 3, interval=0.2, what="every revoked key refused")
    # The live inspector's layer follows the new master too.
    assert on_sentinel(CHANNEL_ROUND_TRIP) == "through the sentinel"


def test_the_clients_commands_sent_as_the_master_dies_are_answered_by_the_promoted_replica(
    slow_sentinels, settings
):
    settings.REDIS_URL = slow_sentinels.url()
    settings.REDIS_SENTINEL_MASTER = MASTER_NAME

    async def across_the_failover() -> list[tuple[object, float]]:
        asynchronous, synchronous = async_standalone(), sync_standalone()
        # Each holds a pooled connection to the master that is about to die.
        await asynchronous.incr("failover:counter")
        synchronous.incr("failover:counter")
        slow_sentinels.kill_master()
        killed_at = time.monotonic()

        async def timed(command) -> tuple[object, float]:
            try:
                answer = await command
            except Exception as failed:  # noqa: BLE001 - what the old retries ended with
                answer = failed
            return answer, time.monotonic() - killed_at

        try:
            return await asyncio.gather(
                timed(asynchronous.incr("failover:counter")),
                timed(asyncio.to_thread(synchronous.incr, "failover:counter")),
            )
        finally:
            await asynchronous.aclose()
            synchronous.close()

    answers = asyncio.run(across_the_failover())
    print(f"\nanswered {[f'{answer!r} after {seconds:.2f} s' for answer, seconds in answers]}")
    for answer, seconds in answers:
        assert isinstance(answer, int), answer
        # No master could answer before the Sentinels called the old one down.
        assert seconds >= SLOW_DOWN_AFTER_MS / 1000


def test_a_session_opened_just_after_the_master_dies_waits_for_the_promoted_replica(
    slow_sentinels, tenant, live_database
):
    env = {"DATABASE_URL": database_url_for_workers(), **slow_sentinels.env()}
    server = LiveServer(live_database, extra_env=env)
    try:
        warm = RawMcp(server.mcp_url(tenant["slug"]), key=tenant["key"])
        warm.initialize()  # the key and server loaded, connections to the master pooled
        old = slow_sentinels.kill_master()
        killed_at = time.monotonic()
        client = RawMcp(server.mcp_url(tenant["slug"]), key=tenant["key"])
        client.initialize()  # its session is written to Redis: answered 200, not 503
        opened = time.monotonic() - killed_at
        slow_sentinels.wait_for_promotion(old)
        promoted = time.monotonic() - killed_at
        echoed = client.call("tools/call", {"name": "echo", "arguments": {"message": "after"}})
    finally:
        server.stop()
    print(
        f"\nthe session opened {opened:.2f} s after the kill (promotion seen at {promoted:.2f} s)"
    )
    assert echoed["result"]["content"][0]["text"] == "You said after"
    assert opened >= SLOW_DOWN_AFTER_MS / 1000


@pytest.fixture
def broker_on_slow_sentinels(slow_sentinels, live_database):
    """A server and a worker whose broker alone is on the slow Sentinels (CELERY_BROKER_URL),
    the platform's state on the machine's Redis: a failover of the broker's master is then met
    by the task's publish itself, not first by the state reads before it (which wait it out)."""
    env = {
        "DATABASE_URL": database_url_for_workers(),
        "REDIS_URL": os.environ["REDIS_URL"],
        "CELERY_BROKER_URL": slow_sentinels.url(),
        "CELERY_BROKER_SENTINEL_MASTER": MASTER_NAME,
    }
    return env


def create_task(client: RawMcp) -> tuple[int, dict, float]:
    """The HTTP status, the final JSON-RPC message and the seconds the answer took."""
    started = time.monotonic()
    response, messages = client.request(
        "tools/call", {"name": "slow_task", "arguments": {}, "task": {"ttl": 120000}}
    )
    return response.status_code, messages[-1] if messages else {}, time.monotonic() - started


def test_a_task_created_just_after_the_brokers_master_dies_is_queued_and_completes(
    broker_on_slow_sentinels, slow_sentinels, tenant, live_database, tmp_path
):
    env = broker_on_slow_sentinels
    server = LiveServer(live_database, extra_env=env)
    try:
        with running_workers(tmp_path) as start:
            start(env=env, concurrency=2)
            client = RawMcp(server.mcp_url(tenant["slug"]), key=tenant["key"])
            client.initialize()
            # The server's publishing connection to the master is pooled by a first task.
            wait_for_result(client, start_task(client))
            old = slow_sentinels.kill_master()
            status, created, answered = create_task(client)
            print(f"\ncreating the task answered {status} after {answered:.2f} s: {created}")
            slow_sentinels.wait_for_promotion(old)
            assert status == 200 and "result" in created, (status, created)
            result = wait_for_result(client, created["result"]["task"]["taskId"], timeout=30)
    finally:
        server.stop()
    assert result["result"]["content"] == [{"type": "text", "text": "task done"}]
    # No master could take the message before the Sentinels called the old one down.
    assert answered >= SLOW_DOWN_AFTER_MS / 1000


TASK_STATUSES = """
from mcptasks.models import Task
result = sorted(Task.objects.filter(server__slug={slug!r}).values_list("status", flat=True))
"""


def test_a_task_created_with_the_brokers_redis_and_sentinels_all_dead_is_refused_in_time(
    broker_on_slow_sentinels, slow_sentinels, tenant, live_database, tmp_path, on_sentinel
):
    env = {**broker_on_slow_sentinels, "REDIS_SENTINEL_FAILOVER_SECONDS": "3"}
    server = LiveServer(live_database, extra_env=env)
    try:
        with running_workers(tmp_path) as start:
            start(env=env)  # alive, so the creation is not refused for want of a worker
            client = RawMcp(server.mcp_url(tenant["slug"]), key=tenant["key"])
            client.initialize()
            wait_for_result(client, start_task(client))
            for process in [*slow_sentinels.sentinels, *slow_sentinels.data]:
                process.kill()
            status, created, answered = create_task(client)
    finally:
        server.stop()
    print(f"\ncreating the task answered {status} after {answered:.2f} s: {created}")
    assert created["error"]["data"] == {"reason": "task-queue-unavailable"}, (status, created)
    # Within the budget (3 s) and one pause; it used to hang until the endpoint gave up on its
    # database thread (MCP_DATABASE_TIMEOUT_SECONDS, 10 s) while the publish went on.
    assert answered < 3 + 2, answered
    # The task its creator was told did not start is ended: the reaper will not start it.
    assert on_sentinel(TASK_STATUSES.format(slug=tenant["slug"])) == ["completed", "failed"]
