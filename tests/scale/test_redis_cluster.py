"""getmcp on a Redis Cluster (three masters, three replicas: tests/scale/redis_cluster.py) with
`REDIS_CLUSTER=true`: a live server and a real Celery worker keep the platform's state on the
cluster (the broker is the run's standalone Redis, as REDIS_CLUSTER requires a broker apart).

Changes are made in a Django process on the cluster (`on_cluster`), so their generation bumps
and announcements go where the server reads them. Then a master is killed under load: after
its replica is promoted, calls go on, no acknowledged call-log row is lost and a key revoked
just before is still refused."""

import threading
import time

import httpx2
import pytest
from django.conf import settings
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from infra import keys as rkeys
from tests.celery_workers import database_url_for_workers, running_workers, wait_until
from tests.conftest import LiveServer
from tests.faults.harness import REVOKED_KEY, SEED_TENANT, django_script, mcp_call
from tests.gateway.endpoint.mcp_http import RawMcp, parse_sse
from tests.waiting import stays

from .redis_cluster import RedisClusterForTests

QUICK_TASK = {
    "name": "quick_task",
    "description": "Works a little, then answers.",
    "inputSchema": {"type": "object", "properties": {}},
    "execution": {"taskSupport": "optional"},
    "kind": "workflow",
    "config": {
        "steps": [
            {"sleep": {"ms": 200}},
            {"return": {"content": [{"type": "text", "text": "task done"}]}},
        ]
    },
}
# The faults harness's tenant, with a task tool beside its echo tool.
SEED = SEED_TENANT.replace('"tools": [{', f'"tools": [{QUICK_TASK!r}, {{')
CHANGE_TOOL = """
from servers.models import Tool
tool = Tool.objects.get(server__slug={slug!r}, name="echo")
tool.description = {description!r}
tool.save()
"""
STORED = """
from activity.models import CallLog
from activity.stream import waiting
from infra.redis import sync_client
calls = CallLog.objects.filter(server__slug={slug!r}, method="tools/call", outcome="ok")
result = {{"rows": calls.count(), "uids": calls.values("uid").distinct().count(),
          "waiting": waiting(sync_client())}}
"""
DRAIN = "from activity.tasks import drain_call_log\ndrain_call_log.delay()"
# A key of the tenant's organization whose generation lives in one of the given slot ranges
# (a third of the slots: a few tries).
ISSUE_IN_SLOTS = """
from redis.crc import key_slot
from accounts.models import ApiKey, digest_key
from infra import keys
organization = ApiKey.objects.get(digest=digest_key({raw!r})).organization
for attempt in range(100):
    key, raw = ApiKey.issue(organization, f"on the master {{attempt}}")
    slot = key_slot(keys.key_generation(key.digest).encode())
    if any(first <= slot <= last for first, last in {ranges!r}):
        break
    key.delete()
result = raw
"""
REVOKE = """
from accounts.models import ApiKey, digest_key
from infra import keys
names = []
for raw in {raws!r}:
    key = ApiKey.objects.get(digest=digest_key(raw))
    key.revoke()
    names.append(keys.key_generation(key.digest))
result = names
"""


@pytest.fixture(scope="module")
def redis_cluster():
    cluster = RedisClusterForTests().start()
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def cluster_env(redis_cluster, live_database):
    return {
        "DATABASE_URL": database_url_for_workers(),
        "REDIS_URL": redis_cluster.url(),
        "REDIS_CLUSTER": "true",
        # The broker apart from the cluster: this run's standalone Redis database.
        "CELERY_BROKER_URL": settings.REDIS_URL,
        "CHANNELS_REDIS_URL": settings.REDIS_URL,
        "CALL_LOG_FLUSH_SECONDS": "0.2",
        "SECURITY_RECHECK_SECONDS": "1",
    }


@pytest.fixture(scope="module")
def on_cluster(cluster_env):
    def run(code: str, timeout: float = 120):
        return django_script(
            code,
            database_url=cluster_env["DATABASE_URL"],
            redis_url=cluster_env["REDIS_URL"],
            extra_env=cluster_env,
            timeout=timeout,
        )

    return run


@pytest.fixture(scope="module")
def web(cluster_env, live_database):
    server = LiveServer(live_database, extra_env=cluster_env)
    yield server
    if server.process.poll() is None:
        server.stop()


@pytest.fixture(scope="module")
def worker(cluster_env, live_database, tmp_path_factory):
    with running_workers(tmp_path_factory.mktemp("cluster-workers")) as start:
        yield start(env=cluster_env, concurrency=2)


@pytest.fixture
def tenant(on_cluster):
    seeded = on_cluster(SEED)
    assert SEED != SEED_TENANT
    return seeded


def wait_until_stored(on_cluster, slug: str, expected: int, timeout: float = 60) -> dict:
    last: dict = {}

    def done():
        last.update(on_cluster(DRAIN + STORED.format(slug=slug)))
        return dict(last) if last["rows"] >= expected and last["waiting"] == 0 else None

    try:
        return wait_until(done, timeout=timeout, interval=0.5, what=f"{expected} stored rows")
    except AssertionError as failed:
        raise AssertionError(f"{failed}; last seen: {last}") from None


def answer_of(response: httpx2.Response) -> dict:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [e["data"] for e in parse_sse(response.text) if isinstance(e["data"], dict)][-1]
    return response.json()


async def test_the_python_sdk_lists_and_calls_tools_with_the_state_on_a_cluster(web, tenant):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {tenant['key']}"})
    async with Client(
        streamable_http_client(web.mcp_url(tenant["slug"]), http_client=http), mode="legacy"
    ) as client:
        tools = await client.list_tools()
        assert {"echo", "quick_task"} <= {tool.name for tool in tools.tools}
        for number in range(5):
            echoed = await client.call_tool("echo", {"message": f"call {number}"})
            assert echoed.content[0].text == f"You said call {number}"


def test_a_task_completes_and_the_call_log_drains_on_a_cluster(web, worker, tenant, on_cluster):
    client = RawMcp(web.mcp_url(tenant["slug"]), key=tenant["key"])
    client.initialize()
    created = client.call(
        "tools/call", {"name": "quick_task", "arguments": {}, "task": {"ttl": 60000}}
    )
    task_id = created["result"]["task"]["taskId"]

    def completed() -> bool:
        return client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "completed"

    wait_until(completed, timeout=30, what="the task to complete")
    result = client.call("tasks/result", {"taskId": task_id})
    assert result["result"]["content"] == [{"type": "text", "text": "task done"}]
    for _ in range(3):
        assert "result" in client.call(
            "tools/call", {"name": "echo", "arguments": {"message": "x"}}
        )
    state = wait_until_stored(on_cluster, tenant["slug"], 3)
    assert state["rows"] == state["uids"] >= 3


def test_a_session_stream_resumes_with_last_event_id_on_a_cluster(web, tenant, on_cluster):
    session = RawMcp(web.mcp_url(tenant["slug"]), key=tenant["key"])
    session.initialize()
    headers = session.headers(accept="text/event-stream")

    def touch(description: str) -> None:
        on_cluster(CHANGE_TOOL.format(slug=tenant["slug"], description=description))

    def listed(events):
        return [e for e in events if e["data"].get("method") == "notifications/tools/list_changed"]

    def read(response, seconds=20):
        buffer, deadline = "", time.monotonic() + seconds
        for chunk in response.iter_text():
            buffer += chunk
            events = [e for e in parse_sse(buffer) if isinstance(e["data"], dict)]
            if listed(events) or time.monotonic() > deadline:
                return listed(events)
        return []

    with session.http.stream("GET", session.url, headers=headers, timeout=30) as stream:
        assert stream.status_code == 200
        touch("first change")
        first = read(stream)
        assert len(first) == 1 and first[0]["id"]
    # While no stream is open, the tools change again: the event waits in the cluster.
    touch("second change")
    resume = {**headers, "last-event-id": first[0]["id"]}
    with session.http.stream("GET", session.url, headers=resume, timeout=30) as resumed:
        assert resumed.status_code == 200
        second = read(resumed)
    assert len(second) == 1 and second[0]["id"] != first[0]["id"]


def test_a_revoked_key_is_refused_on_a_cluster(web, tenant, on_cluster):
    key = tenant["spare_keys"][0]
    assert "result" in answer_of(mcp_call(web.url, tenant["slug"], key))
    on_cluster(REVOKE.format(raws=[key]))
    # Within the mirror's bound (1 s): the announcement reaches the server over the cluster.
    wait_until(
        lambda: mcp_call(web.url, tenant["slug"], key).status_code == REVOKED_KEY,
        timeout=5,
        what="the revoked key to be refused",
    )


class Load:
    """Stateless calls from a few threads; counts what was acknowledged (a result came back)."""

    def __init__(self, url: str, slug: str, key: str, threads: int = 4):
        self.url, self.slug, self.key = url, slug, key
        self.acknowledged = self.failed = 0
        self.failures_at: list[float] = []
        self.acknowledged_at: list[float] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run) for _ in range(threads)]

    def _run(self):
        while not self._stop.is_set():
            try:
                ok = "result" in answer_of(mcp_call(self.url, self.slug, self.key, timeout=5))
            except (httpx2.HTTPError, ValueError):
                ok = False
            with self._lock:
                if ok:
                    self.acknowledged += 1
                    self.acknowledged_at.append(time.monotonic())
                else:
                    self.failed += 1
                    self.failures_at.append(time.monotonic())

    def stalled_after(self, moment: float) -> tuple[float, float]:
        """The longest wait between two answered calls from `moment` on (the last answer before
        it counts as the start), and when the first answer after that wait came."""
        times = sorted(self.acknowledged_at)
        previous = max((t for t in times if t <= moment), default=moment)
        longest, healed = 0.0, moment
        for answered in (t for t in times if t > moment):
            if answered - previous > longest:
                longest, healed = answered - previous, answered
            previous = answered
        return longest, healed - moment

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for thread in self._threads:
            thread.join(30)


def test_calls_continue_after_a_master_is_killed_with_no_row_lost_and_no_revoked_key_back(
    web, worker, tenant, on_cluster, redis_cluster
):
    url, slug = web.url, tenant["slug"]
    # The master holding the call log's stream: the failover's worst case for the log.
    master = redis_cluster.master_of(rkeys.CALL_LOG_STREAM)
    # And a key whose generation lives there too, used once so every cache holds it.
    ranges = redis_cluster.slot_ranges_of(master)
    on_master = on_cluster(ISSUE_IN_SLOTS.format(raw=tenant["key"], ranges=ranges))
    assert "result" in answer_of(mcp_call(url, slug, on_master))
    doomed = [*tenant["spare_keys"], on_master]
    with Load(url, slug, tenant["key"]) as load:
        wait_until(lambda: load.acknowledged >= 50, timeout=30, what="calls under load")
        revoked = on_cluster(REVOKE.format(raws=doomed))
        on_killed = [name for name in revoked if redis_cluster.master_of(name) is master]
        killed_at = time.monotonic()
        heal = redis_cluster.kill_and_wait_for_promotion(master)
        before = load.acknowledged
        wait_until(lambda: load.acknowledged >= before + 50, timeout=30, what="calls again")
        first_ok_after = time.monotonic()
    failing = max(load.failures_at) - killed_at if load.failures_at else 0.0
    print(
        f"\nkilled master :{master.port}; a replica promoted in {heal:.2f} s; calls failed "
        f"until {failing:.2f} s after the kill ({load.failed} failed, {load.acknowledged} "
        f"acknowledged); 50 more calls answered {first_ok_after - killed_at:.2f} s after it; "
        f"{len(on_killed)} of {len(revoked)} revoked keys' generations were on that master"
    )
    state = wait_until_stored(on_cluster, slug, load.acknowledged)
    assert state["rows"] == state["uids"] >= load.acknowledged, state
    assert on_killed, "no revoked key's generation was on the killed master"

    # Past the change log's recheck (SECURITY_RECHECK_SECONDS=1), every revoked key stays out.
    def all_refused() -> bool:
        return all(mcp_call(url, slug, key).status_code == REVOKED_KEY for key in doomed)

    stays(all_refused, 3, interval=0.2, what="every revoked key refused")
