"""OpenTelemetry spans: one per MCP request, one per upstream MCP call, one per outbound HTTP
request; off unless an OTLP endpoint is configured.

Configured once, when this module is first imported: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used
as is) or OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces), OTEL_EXPORTER_OTLP_HEADERS,
OTEL_SERVICE_NAME, and the sampling: requests that carry a sampled traceparent always, others
TRACES_SAMPLE_RATIO of them (or whatever OTEL_TRACES_SAMPLER says when it is set). Without an endpoint `ENABLED` stays False and every hook returns at once:
callers test `tracing.ENABLED` (a module attribute) before doing anything else.

A request's parent is the W3C `traceparent` in its JSON-RPC `params._meta` when it carries one
(MCP's own place for it), else the HTTP `traceparent` header. The request span is current while
the call runs, so outbound spans are its children, and calls to upstreams carry the context on:
`traceparent` in the upstream request's `_meta` and in the HTTP headers of every outbound request.
"""

import contextlib
import contextvars
import logging
import random

from django.conf import settings

log = logging.getLogger(__name__)

ENABLED = False
_tracer = None
_propagator = None
# (span, context token) of the request being answered, ended by asgi.observed; _SKIPPED for
# a request left out by sampling (its outbound calls are left out too).
_request = contextvars.ContextVar("getmcp_request_span", default=None)
_SKIPPED = ("skipped", None)
# Share of requests without a caller trace context that are traced, decided before anything is
# built (None: OTEL_TRACES_SAMPLER decides, through the SDK).
_root_ratio: float | None = None


def traces_endpoint() -> str:
    explicit = settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    if explicit:
        return explicit
    base = settings.OTEL_EXPORTER_OTLP_ENDPOINT
    return f"{base.rstrip('/')}/v1/traces" if base else ""


def configure() -> bool:
    """Start exporting when an endpoint is configured; True if tracing is on."""
    global ENABLED, _tracer, _propagator, _root_ratio
    endpoint = traces_endpoint()
    if not endpoint or ENABLED:
        return ENABLED
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    from .otlp import OtlpHttpSpanExporter, parse_headers

    resource = Resource.create({"service.name": settings.OTEL_SERVICE_NAME or "getmcp"})
    sampler = None  # None: the SDK follows OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG
    if not settings.OTEL_TRACES_SAMPLER:
        # A call whose caller sends a sampled traceparent is always traced; of the others, this
        # share. A recorded span costs a quarter of a warm call's CPU (docs/observability.md).
        # The ratio is applied before a root span is built (begin, _left_out): the SDK then
        # records every root it is asked for.
        _root_ratio = float(settings.TRACES_SAMPLE_RATIO)
        sampler = ParentBased(ALWAYS_ON)
    provider = TracerProvider(resource=resource, sampler=sampler)
    exporter = OtlpHttpSpanExporter(endpoint, parse_headers(settings.OTEL_EXPORTER_OTLP_HEADERS))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    _tracer = provider.get_tracer("getmcp")
    _propagator = TraceContextTextMapPropagator()
    ENABLED = True
    log.info("tracing: exporting spans to %s", endpoint)
    return True


def _parent(meta, header: str | None, state: str | None):
    carrier = {}
    if isinstance(meta, dict) and isinstance(meta.get("traceparent"), str):
        carrier["traceparent"] = meta["traceparent"]
        if isinstance(meta.get("tracestate"), str):
            carrier["tracestate"] = meta["tracestate"]
    elif header:
        carrier["traceparent"] = header
        if state:
            carrier["tracestate"] = state
    return _propagator.extract(carrier) if carrier else None


def begin(gate, parsed) -> None:
    """Open the span of one POSTed MCP message (a request, or a batch) and make it current."""
    if not ENABLED or _request.get() is not None:
        return
    from mcp_protocol.jsonrpc import Request

    request = parsed if isinstance(parsed, Request) else None
    params = request.params if request is not None and isinstance(request.params, dict) else {}
    req = gate.request
    meta, header = params.get("_meta"), req.header("traceparent")
    if (
        _root_ratio is not None
        and not header
        and not (isinstance(meta, dict) and "traceparent" in meta)
        and random.random() >= _root_ratio
    ):
        # Not sampled and nothing to pass on: no span at all, and none for its outbound calls.
        _request.set(_SKIPPED)
        return
    _open(gate, request, params, _parent(meta, header, req.header("tracestate")))


def _open(gate, request, params: dict, parent) -> None:
    from opentelemetry import context, trace

    method = request.method if request is not None else "batch"
    snapshot = gate.snapshot
    attributes = {
        "mcp.method.name": method,
        "getmcp.server.slug": snapshot.slug,
        "getmcp.server.version": str(snapshot.server_info.get("version", "")),
        "getmcp.server.generation": str(snapshot.generation),
        "getmcp.surface": "mcp",
    }
    if gate.version:
        attributes["getmcp.server.pinned_version"] = gate.version
    target = params.get("name") if method in ("tools/call", "prompts/get") else None
    if isinstance(target, str):
        attributes["gen_ai.tool.name" if method == "tools/call" else "gen_ai.prompt.name"] = target
    if request is not None:
        attributes["jsonrpc.request.id"] = str(request.id)
    if gate.session_id:
        attributes["mcp.session.id"] = gate.session_id
    name = f"{method} {target}" if isinstance(target, str) else method
    span = _tracer.start_span(
        name, context=parent, kind=trace.SpanKind.SERVER, attributes=attributes
    )
    token = context.attach(trace.set_span_in_context(span, parent))
    _request.set((span, token))


def annotate(method: str, tool: str | None, outcome: str, error: str) -> None:
    """The outcome of an answered call, on the current request span (calllog.py calls this)."""
    from opentelemetry import trace

    span = trace.get_current_span()
    if not span.is_recording():
        return
    span.set_attribute("getmcp.outcome", outcome)
    if outcome == "error":
        span.set_status(trace.Status(trace.StatusCode.ERROR, error[:200]))


def finish(status: int) -> None:
    current = _request.get()
    if current is None:
        return
    if current is _SKIPPED:
        _request.set(None)
        return
    from opentelemetry import context, trace

    span, token = current
    _request.set(None)
    if status:
        span.set_attribute("http.response.status_code", status)
        if status >= 500:
            span.set_status(trace.Status(trace.StatusCode.ERROR))
    span.end()
    with contextlib.suppress(ValueError):
        context.detach(token)


def _left_out() -> bool:
    """Whether an outbound call goes without a span: its request was left out by sampling, or
    it would start a trace of its own (a Celery task, a refresh) and the ratio says no."""
    current = _request.get()
    if current is _SKIPPED:
        return True
    if current is not None or _root_ratio is None:
        return False
    from opentelemetry import trace

    return not trace.get_current_span().get_span_context().is_valid and (
        random.random() >= _root_ratio
    )


def inject(carrier: dict) -> dict:
    """`carrier` with the current context's traceparent (and tracestate) written into it."""
    _propagator.inject(carrier)
    return carrier


@contextlib.contextmanager
def upstream_call(method: str, name: str | None = None):
    """A client span around one call to an upstream MCP server; yields the `_meta` to send
    (None when tracing is off)."""
    if not ENABLED or _left_out():
        yield None
        return
    from opentelemetry import trace

    attributes = {"mcp.method.name": method}
    if name:
        attributes["gen_ai.tool.name"] = name
    label = f"upstream {method} {name}" if name else f"upstream {method}"
    with _tracer.start_as_current_span(
        label, kind=trace.SpanKind.CLIENT, attributes=attributes
    ) as span:
        yield inject({})
        span.set_attribute("getmcp.outcome", "ok")


async def outbound_http(send, request):
    """One outbound HTTP request (servers/outbound's transport): a client span, and the
    request carries its context in the `traceparent` header."""
    if _left_out():
        return await send(request)
    from opentelemetry import trace

    url = request.url
    attributes = {
        "http.request.method": request.method,
        # Without the query: query strings may carry API keys.
        "url.full": f"{url.scheme}://{url.host}{':' + str(url.port) if url.port else ''}{url.path}",
        "server.address": url.host,
    }
    with _tracer.start_as_current_span(
        f"{request.method}", kind=trace.SpanKind.CLIENT, attributes=attributes
    ) as span:
        headers = inject({})
        for key, value in headers.items():
            request.headers[key] = value
        response = await send(request)
        span.set_attribute("http.response.status_code", response.status_code)
        if response.status_code >= 500:
            span.set_status(trace.Status(trace.StatusCode.ERROR))
        return response


configure()
