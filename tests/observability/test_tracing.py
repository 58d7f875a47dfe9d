"""Traces of a real uvicorn process configured with OTEL_EXPORTER_OTLP_ENDPOINT, received by an
OTLP/HTTP collector in this test process (protobuf over loopback, the real export path): the
request span continues the caller's `_meta.traceparent`, the upstream call and its HTTP
requests are its children, and the upstream server receives the context in `_meta` and in the
`traceparent` header; an http tool's request carries it too."""

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from accounts.models import ApiKey, User
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.gateway.endpoint.test_stateless import Modern
from tests.servers.upstream.fixtures import free_port
from tests.waiting import listening, stays, wait_until

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
SCRIPT = Path(__file__).resolve().parent / "traced_upstream.py"


class Collector:
    """An OTLP/HTTP receiver (POST /v1/traces, protobuf) and a plain HTTP API that records the
    headers it is sent (for the http tool), on one loopback port."""

    def __init__(self):
        self.spans: list = []
        self.services: set[str] = set()
        self.api_headers: list[dict] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.path == "/v1/traces":
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    for resource in request.resource_spans:
                        for attribute in resource.resource.attributes:
                            if attribute.key == "service.name":
                                collector.services.add(attribute.value.string_value)
                        for scope in resource.scope_spans:
                            collector.spans.extend(scope.spans)
                    reply = ExportTraceServiceResponse().SerializeToString()
                    self._answer(reply, "application/x-protobuf")
                else:
                    self.send_error(404)

            def do_GET(self):  # noqa: N802
                collector.api_headers.append(dict(self.headers))
                self._answer(b'{"ok": true}', "application/json")

            def _answer(self, body, content_type):
                self.send_response(200)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def wait_for(self, predicate, timeout=20.0):
        try:
            return wait_until(
                lambda: [s for s in list(self.spans) if predicate(s)],
                timeout=timeout,
                interval=0.1,
                what="the span",
            )
        except AssertionError as failed:
            raise AssertionError(f"{failed}; got {[s.name for s in self.spans]}") from None


@pytest.fixture(scope="module")
def collector():
    receiver = Collector()
    yield receiver
    receiver.http.shutdown()


@pytest.fixture(scope="module")
def traced_upstream():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    listening(port, process, timeout=30, what="the traced upstream")
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(10)


@pytest.fixture(scope="module")
def traced_server(live_database, collector):
    server = LiveServer(
        live_database,
        extra_env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_SERVICE_NAME": "getmcp-under-test",
            # Only calls whose caller sends a sampled traceparent are traced.
            "TRACES_SAMPLE_RATIO": "0",
            "OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8",
        },
    )
    yield server
    server.stop()


def make_server(committed, unique, upstream_url, api_url) -> tuple[str, str]:
    def make():
        user = User.objects.create_user(f"traces-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        definition = {
            "slug": f"traces-{unique}",
            "name": "traces",
            "tools": [
                {
                    "name": "relay",
                    "description": "The upstream's `seen`.",
                    "inputSchema": {"type": "object"},
                    "kind": "upstream",
                    "config": {"url": upstream_url, "tool": "seen"},
                },
                {
                    "name": "api",
                    "description": "An HTTP API.",
                    "inputSchema": {"type": "object"},
                    "kind": "http",
                    "config": {"url": f"{api_url}/api/thing?key=secret-in-query"},
                },
            ],
        }
        server = import_definition(definition, org)
        _, raw = ApiKey.issue(org, "k")
        return server.slug, raw

    return committed(make)


def hexid(raw: bytes) -> str:
    return raw.hex()


def attributes(span) -> dict:
    return {a.key: a.value.string_value or a.value.int_value for a in span.attributes}


def test_a_call_through_an_upstream_is_one_trace_from_the_callers_traceparent(
    traced_server, collector, traced_upstream, committed, unique
):
    slug, raw = make_server(committed, unique, traced_upstream, collector.url)
    client = RawMcp(traced_server.mcp_url(slug), key=raw)
    client.initialize()
    traceparent = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"
    reply = client.call(
        "tools/call", {"name": "relay", "arguments": {}, "_meta": {"traceparent": traceparent}}
    )
    seen = json.loads(reply["result"]["content"][0]["text"])

    [request] = collector.wait_for(lambda s: s.name == "tools/call relay")
    assert hexid(request.trace_id) == CALLER_TRACE
    assert hexid(request.parent_span_id) == CALLER_SPAN
    found = attributes(request)
    assert found["getmcp.server.slug"] == slug
    assert found["mcp.method.name"] == "tools/call"
    assert found["gen_ai.tool.name"] == "relay"
    assert found["getmcp.outcome"] == "ok"
    assert found["getmcp.server.version"] == "1.0.0"
    assert found["http.response.status_code"] == 200

    [upstream] = collector.wait_for(lambda s: s.name == "upstream tools/call seen")
    assert upstream.trace_id == request.trace_id
    assert upstream.parent_span_id == request.span_id
    outbound = collector.wait_for(lambda s: s.trace_id == request.trace_id and s.name == "POST")
    # initialize and the rest of the handshake under the request; the call under its span.
    assert {s.parent_span_id for s in outbound} <= {request.span_id, upstream.span_id}
    assert any(s.parent_span_id == upstream.span_id for s in outbound)

    # What the upstream received: the upstream span in _meta, an HTTP span in the header.
    meta_trace, meta_parent = seen["meta"].split("-")[1:3]
    assert (meta_trace, meta_parent) == (CALLER_TRACE, hexid(upstream.span_id))
    header_trace, header_parent = seen["header"].split("-")[1:3]
    assert header_trace == CALLER_TRACE
    assert header_parent in {hexid(s.span_id) for s in outbound}


def test_an_http_tool_request_is_a_child_span_and_carries_the_header(
    traced_server, collector, traced_upstream, committed, unique
):
    slug, raw = make_server(committed, unique, traced_upstream, collector.url)
    client = RawMcp(traced_server.mcp_url(slug), key=raw)
    client.initialize()
    collector.api_headers.clear()
    traceparent = f"00-{'ab' * 16}-{'cd' * 8}-01"
    response, messages = client.request(
        "tools/call", {"name": "api", "arguments": {}}, traceparent=traceparent
    )
    assert response.status_code == 200
    assert "isError" not in messages[-1]["result"]

    [request] = collector.wait_for(lambda s: s.name == "tools/call api")
    assert hexid(request.trace_id) == "ab" * 16  # the HTTP header is the parent without _meta
    [get] = collector.wait_for(lambda s: s.name == "GET" and s.trace_id == request.trace_id)
    assert get.parent_span_id == request.span_id
    assert attributes(get)["url.full"] == f"{collector.url}/api/thing"  # no query: no secrets
    [sent] = collector.api_headers
    assert sent["traceparent"].split("-")[1:3] == ["ab" * 16, hexid(get.span_id)]


def test_a_stateless_era_call_is_traced_from_its_meta_traceparent(
    traced_server, collector, traced_upstream, committed, unique
):
    slug, raw = make_server(committed, unique, traced_upstream, collector.url)
    client = Modern(traced_server.mcp_url(slug), key=raw)
    caller = f"00-{'9a' * 16}-{'bc' * 8}-01"
    result = client.result("tools/call", {"name": "api", "_meta": {"traceparent": caller}})
    assert not result.get("isError")

    [request] = collector.wait_for(
        lambda s: hexid(s.trace_id) == "9a" * 16 and s.name == "tools/call api"
    )
    assert hexid(request.parent_span_id) == "bc" * 8
    assert attributes(request)["getmcp.outcome"] == "ok"
    [get] = collector.wait_for(lambda s: s.name == "GET" and s.trace_id == request.trace_id)
    assert get.parent_span_id == request.span_id


def test_a_call_without_a_sampled_caller_is_not_recorded_at_ratio_zero(
    traced_server, collector, traced_upstream, committed, unique
):
    slug, raw = make_server(committed, unique, traced_upstream, collector.url)
    client = RawMcp(traced_server.mcp_url(slug), key=raw)
    client.initialize()
    unsampled = f"00-{'12' * 16}-{'34' * 8}-00"
    collector.api_headers.clear()
    assert client.request("tools/call", {"name": "api"}, traceparent=unsampled)[0].is_success
    # Unsampled, the context still travels on (flags 00): the API's side decides alike.
    passed_on = collector.api_headers[0]["traceparent"]
    assert passed_on.startswith(f"00-{'12' * 16}-") and passed_on.endswith("-00")
    assert client.request("tools/call", {"name": "api"})[0].is_success
    sampled = f"00-{'56' * 16}-{'78' * 8}-01"
    assert client.request("tools/call", {"name": "api"}, traceparent=sampled)[0].is_success
    collector.wait_for(lambda s: hexid(s.trace_id) == "56" * 16 and s.name == "tools/call api")

    def traced() -> set[str]:
        return {
            hexid(s.trace_id)
            for s in list(collector.spans)
            if attributes(s).get("getmcp.server.slug") == slug
        }

    # Spans that must never come cannot be waited for: watched for a while instead, in which a
    # batch of the earlier calls would have arrived.
    stays(lambda: traced() == {"56" * 16}, 0.5, what="only the sampled trace exported")


def test_spans_carry_the_configured_service_name(traced_server, collector):
    collector.wait_for(lambda s: s.name.startswith("tools/call"))
    assert collector.services == {"getmcp-under-test"}
