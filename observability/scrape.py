"""Gauges read when Prometheus scrapes, from the shared state every process sees (Redis,
Postgres): nothing here runs on an MCP call.

Each group is read on its own; a group that fails (Redis or Postgres away) is left out of that
scrape and `getmcp_scrape_ok{group=...}` says 0, so the rest still arrives. Key scans are
bounded (SCAN_LIMIT keys), so a scrape's cost does not grow without end with the sessions open.
"""

import logging
import time

from django.conf import settings
from prometheus_client.core import GaugeMetricFamily

from infra import keys as rkeys

log = logging.getLogger(__name__)

SCAN_LIMIT = 200_000
SCAN_BATCH = 1000
# Terminal task statuses are history, not queue: only these are counted.
OPEN_TASK_STATUSES = ("working", "input_required")


def _redis():
    from infra.redis import sync_client

    return sync_client()


def _scan_count(client, pattern: str, type_: str | None = None) -> tuple[int, bool]:
    """How many keys match (and whether the scan stopped at SCAN_LIMIT)."""
    count = seen = 0
    cursor = 0
    while True:
        cursor, keys = client.scan(cursor, match=pattern, count=SCAN_BATCH, _type=type_)
        count += len(keys)
        seen += SCAN_BATCH
        if cursor == 0:
            return count, False
        if seen >= SCAN_LIMIT:
            return count, True


def _sessions():
    # A session is one hash mcp:s:<sid> (keys.session); its streams and lists are other types.
    count, partial = _scan_count(_redis(), rkeys.SESSIONS_PATTERN, "hash")
    yield GaugeMetricFamily(
        "getmcp_sessions_open", "MCP sessions (2025-era) alive in Redis.", value=count
    )
    yield GaugeMetricFamily(
        "getmcp_sessions_count_partial",
        "1 when the session count stopped at the scan limit (the true number is higher).",
        value=int(partial),
    )


def _queues():
    from activity import stream
    from getmcp import heartbeat

    client = _redis()
    queues = sorted(settings.CELERY_TASK_QUEUES)
    pipe = client.pipeline(transaction=False)
    pipe.xlen(stream.STREAM_KEY)
    pipe.zrange(heartbeat.WORKERS_KEY, 0, -1, withscores=True)
    pipe.get(heartbeat.BEAT_KEY)
    for queue in queues:
        pipe.llen(queue)
    backlog, workers, beat, *lengths = pipe.execute()
    now = time.time()

    yield GaugeMetricFamily(
        "getmcp_call_log_backlog",
        "Call-log rows waiting in the Redis stream to be stored in Postgres.",
        value=backlog,
    )
    depth = GaugeMetricFamily(
        "getmcp_celery_queue_length", "Messages waiting in a Celery queue.", labels=["queue"]
    )
    for queue, length in zip(queues, lengths, strict=True):
        depth.add_metric([queue], length)
    yield depth

    ages = GaugeMetricFamily(
        "getmcp_worker_heartbeat_age_seconds",
        "Seconds since each Celery worker's last heartbeat (getmcp/heartbeat.py).",
        labels=["worker"],
    )
    alive = 0
    for name, at in workers:
        age = max(0.0, now - at)
        alive += age < heartbeat.WORKER_STALE
        ages.add_metric([name.decode() if isinstance(name, bytes) else str(name)], age)
    yield ages
    yield GaugeMetricFamily(
        "getmcp_workers_alive",
        "Celery workers whose heartbeat is fresh.",
        value=1 if heartbeat._embedded() else alive,
    )
    beat_age = GaugeMetricFamily(
        "getmcp_beat_heartbeat_age_seconds", "Seconds since Celery beat's last tick."
    )
    if beat is not None:
        beat_age.add_metric([], max(0.0, now - float(beat)))
    yield beat_age


def _upstreams():
    client = _redis()
    keys = []
    for key in client.scan_iter(
        match=rkeys.UPSTREAM_HEALTH_PATTERN, count=SCAN_BATCH, _type="hash"
    ):
        keys.append(key)
        if len(keys) >= SCAN_LIMIT // 20:
            break
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.hget(key, "status")
    counts: dict[str, int] = {"ok": 0, "unreachable": 0}
    for status in pipe.execute() if keys else []:
        label = status.decode() if status else "unknown"
        counts[label] = counts.get(label, 0) + 1
    family = GaugeMetricFamily(
        "getmcp_upstreams",
        "Upstream MCP servers by their last known health (servers/upstream/health.py).",
        labels=["status"],
    )
    for status, count in sorted(counts.items()):
        family.add_metric([status], count)
    yield family


def _tasks():
    from django.db import close_old_connections
    from django.db.models import Count, Min, Q

    from mcptasks.models import Task

    close_old_connections()
    rows = (
        Task.objects.filter(status__in=OPEN_TASK_STATUSES)
        .values("status")
        .annotate(
            n=Count("id"),
            waiting=Count("id", filter=Q(heartbeat_at__isnull=True)),
            oldest=Min("created_at"),
            oldest_waiting=Min("created_at", filter=Q(heartbeat_at__isnull=True)),
        )
    )
    count = GaugeMetricFamily(
        "getmcp_mcp_tasks",
        "MCP tasks not finished, by status and whether a worker has started them.",
        labels=["status", "started"],
    )
    age = GaugeMetricFamily(
        "getmcp_mcp_task_oldest_age_seconds",
        "Age of the oldest unfinished MCP task, by status and whether a worker started it.",
        labels=["status", "started"],
    )
    now = time.time()
    seen = {status: None for status in OPEN_TASK_STATUSES}
    for row in rows:
        seen[row["status"]] = row
    for status, row in seen.items():
        waiting = row["waiting"] if row else 0
        count.add_metric([status, "no"], waiting)
        count.add_metric([status, "yes"], (row["n"] - waiting) if row else 0)
        if row and row["oldest_waiting"] is not None:
            age.add_metric([status, "no"], now - row["oldest_waiting"].timestamp())
        if row and row["oldest"] is not None:
            age.add_metric([status, "any"], now - row["oldest"].timestamp())
    yield count
    yield age


GROUPS = {"sessions": _sessions, "queues": _queues, "upstreams": _upstreams, "tasks": _tasks}


class PlatformCollector:
    """A prometheus_client collector: `collect()` runs once per scrape."""

    def collect(self):
        ok = GaugeMetricFamily(
            "getmcp_scrape_ok",
            "1 when a group of platform gauges was read on this scrape, 0 when it failed.",
            labels=["group"],
        )
        for name, read in GROUPS.items():
            try:
                families = list(read())
            except Exception as exc:
                log.warning("metrics: could not read %s: %r", name, exc)
                ok.add_metric([name], 0)
                continue
            ok.add_metric([name], 1)
            yield from families
        yield ok
