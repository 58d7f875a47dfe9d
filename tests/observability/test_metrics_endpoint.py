"""GET /metrics of a real uvicorn with two worker processes (PROMETHEUS_MULTIPROC_DIR), scraped
and parsed with prometheus_client's parser after real MCP calls: counters by server, method and
outcome, latency histograms, open sessions and SSE streams, call-log backlog, Celery queue
depth, MCP task ages, worker heartbeats and upstream health; the bearer token guards it all."""

import json
import threading
import time
from datetime import timedelta

import httpx2
import pytest
from django.utils import timezone
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from accounts.models import ApiKey, User
from activity import stream
from getmcp import heartbeat
from infra.redis import sync_client
from mcptasks.models import Task
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.gateway.endpoint.mcp_http import ACCEPT_BOTH, RawMcp
from tests.servers.upstream.fixtures import free_port
from tests.waiting import wait_until

TOKEN = "metrics-token-7c1d2e"


@pytest.fixture(scope="module")
def metrics_server(live_database, tmp_path_factory):
    directory = tmp_path_factory.mktemp("prometheus-multiproc")
    server = LiveServer(
        live_database,
        workers=2,
        extra_env={
            "METRICS_TOKEN": TOKEN,
            "PROMETHEUS_MULTIPROC_DIR": str(directory),
            "OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8",
        },
    )
    server.multiproc_dir = directory
    yield server
    server.stop()


def scrape(server, token=TOKEN) -> dict:
    """{(name, frozenset(labels)): value} of every sample."""
    response = httpx2.get(
        f"{server.url}/metrics", headers={"authorization": f"Bearer {token}"}, timeout=30
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples, name, **labels) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def named(samples, name) -> dict:
    return {labels: v for (n, labels), v in samples.items() if n == name}


def make_server(committed, unique, upstream_url: str) -> tuple[str, str]:
    def make():
        user = User.objects.create_user(f"metrics-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        definition = {
            "slug": f"metrics-{unique}",
            "name": "metrics",
            "tools": [
                {
                    "name": "echo",
                    "description": "Echo.",
                    "inputSchema": {"type": "object", "properties": {"m": {"type": "string"}}},
                    "kind": "static",
                    "config": {"content": [{"type": "text", "text": "{{ m }}"}]},
                },
                {
                    "name": "far",
                    "description": "An upstream that is not there.",
                    "inputSchema": {"type": "object"},
                    "kind": "upstream",
                    "config": {"url": upstream_url, "tool": "add", "timeoutSeconds": 5},
                },
            ],
        }
        server = import_definition(definition, org)
        _, raw = ApiKey.issue(org, "k")
        Task.objects.create(
            organization=org,
            server=server,
            credential="k",
            tool_name="echo",
            ttl_ms=3_600_000,
            expires_at=timezone.now() + timedelta(hours=1),
        )
        Task.objects.filter(server=server).update(created_at=timezone.now() - timedelta(minutes=5))
        return server.slug, raw

    return committed(make)


def worker_pids(server, slug: str) -> set[str]:
    """The processes whose own counter file holds a value for this MCP server."""
    pids = set()
    for path in server.multiproc_dir.glob("counter_*.db"):
        for key, _value, _timestamp, _position in MmapedDict.read_all_values_from_file(str(path)):
            _metric, _sample, labels, _help = json.loads(key)
            if labels.get("server") == slug:
                pids.add(path.stem.rsplit("_", 1)[-1])
    return pids


def call_on_fresh_connections(url, raw, calls: list[tuple[str, dict]]) -> None:
    """Each call on a new client and session, several at once: both workers get some."""

    def one(method, params):
        client = RawMcp(url, key=raw)
        client.initialize()
        client.call(method, params)

    threads = [threading.Thread(target=one, args=call) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)


def test_metrics_answer_404_without_the_token_and_with_a_wrong_one(metrics_server):
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": f"Basic {TOKEN}"}):
        response = httpx2.get(f"{metrics_server.url}/metrics", headers=headers, timeout=30)
        assert response.status_code == 404
        assert "getmcp_" not in response.text


def test_a_deployment_without_a_metrics_token_serves_no_metrics(asgi_server):
    for headers in ({}, {"authorization": f"Bearer {TOKEN}"}):
        response = httpx2.get(f"{asgi_server.url}/metrics", headers=headers, timeout=30)
        assert response.status_code == 404
        assert "getmcp_" not in response.text


def test_metrics_switched_off_answer_a_json_404_that_names_the_setting_to_turn_them_on(
    asgi_server,
):
    response = httpx2.get(f"{asgi_server.url}/metrics", timeout=30)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error"] == "not_found"
    assert "METRICS_TOKEN" in body["message"] and "Authorization: Bearer" in body["message"]


def test_with_the_token_set_a_request_without_it_learns_nothing_of_the_endpoint(metrics_server):
    response = httpx2.get(f"{metrics_server.url}/metrics", timeout=30)
    assert response.status_code == 404
    assert "METRICS_TOKEN" not in response.text


def test_real_calls_move_the_counters_and_histograms_summed_over_both_workers(
    metrics_server, committed, unique
):
    slug, raw = make_server(committed, unique, f"http://127.0.0.1:{free_port()}/mcp")
    url = metrics_server.mcp_url(slug)
    batch = [("tools/call", {"name": "echo", "arguments": {"m": str(i)}}) for i in range(6)]
    # The kernel hands each new connection to whichever worker accepts first, and on a fast
    # machine one worker can take a whole batch: send batches until both have written values.
    ok_calls: list = []
    for _ in range(20):
        ok_calls += batch
        call_on_fresh_connections(url, raw, batch)
        if len(worker_pids(metrics_server, slug)) >= 2:
            break
    call_on_fresh_connections(url, raw, [("tools/call", {"name": "nope"})])
    assert httpx2.post(url, json={}, timeout=30).status_code == 401  # no key: refused

    samples = scrape(metrics_server)
    requests = "getmcp_mcp_requests_total"
    assert value(samples, requests, server=slug, method="tools/call", surface="mcp", status="ok")
    assert value(
        samples, requests, server=slug, method="tools/call", surface="mcp", status="ok"
    ) == len(ok_calls)
    assert (
        value(samples, requests, server=slug, method="tools/call", surface="mcp", status="error")
        == 1
    )
    assert (
        value(samples, requests, server=slug, method="initialize", surface="mcp", status="ok")
        == len(ok_calls) + 1
    )
    histogram = "getmcp_mcp_request_duration_seconds"
    count = value(samples, f"{histogram}_count", method="tools/call", surface="mcp")
    assert count >= len(ok_calls) + 1
    assert value(samples, f"{histogram}_bucket", method="tools/call", surface="mcp", le="+Inf") == (
        count
    )
    assert value(samples, "getmcp_http_responses_total", surface="mcp", code="4xx") >= 1
    assert value(samples, "getmcp_http_responses_total", surface="mcp", code="2xx") >= 14

    # Values live in per-process files: both worker processes wrote some, and the scrape
    # above summed them (the counts are exact although the calls were spread).
    assert len(worker_pids(metrics_server, slug)) >= 2


def test_an_open_event_stream_and_new_sessions_show_in_the_gauges(
    metrics_server, committed, unique
):
    slug, raw = make_server(committed, unique, f"http://127.0.0.1:{free_port()}/mcp")
    before = scrape(metrics_server)
    assert value(before, "getmcp_scrape_ok", group="sessions") == 1
    sessions_before = value(before, "getmcp_sessions_open")
    client = RawMcp(metrics_server.mcp_url(slug), key=raw)
    client.initialize()
    RawMcp(metrics_server.mcp_url(slug), key=raw).initialize()

    opened = threading.Event()
    done = threading.Event()

    def listen():
        headers = {**client.headers(), "accept": ACCEPT_BOTH.split(", ")[1]}
        with (
            httpx2.Client(timeout=30) as http,
            http.stream("GET", client.url, headers=headers) as response,
        ):
            assert response.status_code == 200
            opened.set()
            for _chunk in response.iter_bytes():
                if done.is_set():
                    break

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    assert opened.wait(30)
    try:
        during = scrape(metrics_server)
        assert value(during, "getmcp_sse_streams_open", surface="mcp") >= 1
        assert value(during, "getmcp_sessions_open") >= sessions_before + 2
    finally:
        done.set()
        reader.join(30)
    wait_until(
        lambda: value(scrape(metrics_server), "getmcp_sse_streams_open", surface="mcp") == 0,
        timeout=20,
        interval=0.2,
        what="the closed stream to be no longer counted",
    )


def test_backlog_queues_tasks_heartbeats_and_upstream_health_are_read_at_scrape_time(
    metrics_server, committed, unique
):
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    slug, raw = make_server(committed, unique, dead)
    # A real call to the missing upstream records it unreachable (servers/upstream/health.py).
    answer = RawMcp(metrics_server.mcp_url(slug), key=raw)
    answer.initialize()
    assert answer.call("tools/call", {"name": "far", "arguments": {}})["result"]["isError"]
    redis = sync_client()
    heartbeat.worker_beat("celery@metrics-test", now=time.time() - 7)
    try:
        low = stream.waiting(redis)
        samples = scrape(metrics_server)
        high = stream.waiting(redis)
        queue_lengths = {q: redis.llen(q) for q in ("platform", "mcp")}
    finally:
        redis.zrem(heartbeat.WORKERS_KEY, "celery@metrics-test")

    for group in ("sessions", "queues", "upstreams", "tasks"):
        assert value(samples, "getmcp_scrape_ok", group=group) == 1, group
    assert low <= value(samples, "getmcp_call_log_backlog") <= high
    for queue, length in queue_lengths.items():
        assert value(samples, "getmcp_celery_queue_length", queue=queue) == length
    age = value(samples, "getmcp_worker_heartbeat_age_seconds", worker="celery@metrics-test")
    assert 7 <= age < 60
    assert value(samples, "getmcp_workers_alive") >= 1
    assert value(samples, "getmcp_upstreams", status="unreachable") >= 1
    assert value(samples, "getmcp_mcp_tasks", status="working", started="no") >= 1
    oldest = value(samples, "getmcp_mcp_task_oldest_age_seconds", status="working", started="no")
    assert oldest >= 300
