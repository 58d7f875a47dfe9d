"""The counters and histograms the hot path moves: in process, no Redis, no SQL.

Each web process counts for itself. With several worker processes (gunicorn, uvicorn
--workers) PROMETHEUS_MULTIPROC_DIR must be set before this module is imported: values then
live in memory-mapped files there, and whichever process answers GET /metrics sums them all
(multiproc.py; scripts/run.py and getmcp/gunicorn_conf.py set it up).

Label cardinality is bounded by construction:
- `method` is one of MCP_METHODS, anything else is "other" (clients may send any string);
- `status` is the call's outcome (ok, error, tool_error, cancelled), `code` an HTTP class (2xx);
- `surface` is one of the endpoint's surfaces (mcp, rest, webtools), set by the code;
- `server` is the server's slug, for the first METRICS_MAX_SERVERS slugs a process sees; later
  ones count as "_other" (each process keeps its own list, so across N processes at most
  N x the cap, in practice the same busy slugs). Latency histograms carry no server label.
"""

import atexit
import os

from django.conf import settings
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

from . import multiproc

MCP_METHODS = frozenset(
    {
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
        "tasks/update",
        "server/discover",
        "subscriptions/listen",
    }
)
SURFACES = frozenset({"mcp", "rest", "webtools"})
OTHER_SERVER = "_other"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

# `*_created` series double the output and no dashboard reads them.
disable_created_metrics()

# The registry of this process's own metrics; single-process exposition reads it (views.py).
REGISTRY = CollectorRegistry(auto_describe=True)

REQUESTS = Counter(
    "getmcp_mcp_requests",
    "MCP requests answered, by server, method, surface and outcome.",
    ["server", "method", "surface", "status"],
    registry=REGISTRY,
)
LATENCY = Histogram(
    "getmcp_mcp_request_duration_seconds",
    "Time to answer an MCP request, by method and surface.",
    ["method", "surface"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
RESPONSES = Counter(
    "getmcp_http_responses",
    "HTTP responses of the MCP endpoint (refusals included), by surface and status class.",
    ["surface", "code"],
    registry=REGISTRY,
)
SSE_STREAMS = Gauge(
    "getmcp_sse_streams_open",
    "Server-sent event streams open now (session GET streams, streamed POST answers, the old "
    "HTTP+SSE transport, subscriptions/listen).",
    ["surface"],
    multiprocess_mode="livesum",
    registry=REGISTRY,
)

_servers: set[str] = set()
# Children by label tuple: `labels()` takes a lock and builds a key on every call.
_request_children: dict = {}
_latency_children: dict = {}
_response_children: dict = {}


def _server_label(slug: str) -> str:
    if slug in _servers:
        return slug
    if len(_servers) < int(settings.METRICS_MAX_SERVERS):
        _servers.add(slug)
        return slug
    return OTHER_SERVER


def observe_call(slug: str, method: str, surface: str, status: str, seconds: float) -> None:
    """One answered request (called by gateway/pipeline/record.py for every call it logs)."""
    method = method if method in MCP_METHODS else "other"
    surface = surface if surface in SURFACES else "other"
    key = (_server_label(slug), method, surface, status)
    child = _request_children.get(key)
    if child is None:
        child = _request_children[key] = REQUESTS.labels(*key)
    child.inc()
    timing = _latency_children.get((method, surface))
    if timing is None:
        timing = _latency_children[(method, surface)] = LATENCY.labels(method, surface)
    timing.observe(seconds)


def observe_response(surface: str, status: int) -> None:
    code = f"{status // 100}xx" if status else "none"
    child = _response_children.get((surface, code))
    if child is None:
        child = _response_children[(surface, code)] = RESPONSES.labels(surface, code)
    child.inc()


def stream_gauge(surface: str):
    return SSE_STREAMS.labels(surface)


def _forget_on_exit() -> None:
    """A worker that exits takes its live gauges (open streams) with it."""
    from prometheus_client import multiprocess

    pid = os.getpid()
    atexit.register(lambda: os.getpid() == pid and multiprocess.mark_process_dead(pid))


if multiproc.directory():
    _forget_on_exit()
