"""Spans sent to an OTLP/HTTP collector (protobuf over POST), as the standard exporter does.

OpenTelemetry's own HTTP exporter speaks `requests`; this project has one HTTP client, httpx2,
so this is that exporter's small transport part over httpx2, with OpenTelemetry's encoder
(opentelemetry-exporter-otlp-proto-common) producing the exact protobuf body. It runs on the
SDK's batch thread, never on a request. The collector is the operator's own endpoint, so the
outbound SSRF guard (meant for tenant-chosen URLs) does not apply to it.
"""

import logging
import time

import httpx2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

log = logging.getLogger(__name__)

RETRIES = 3
RETRYABLE = frozenset({429, 502, 503, 504})


def parse_headers(raw: str) -> dict[str, str]:
    """OTEL_EXPORTER_OTLP_HEADERS: `key=value,key2=value2` (values URL-encoded)."""
    from urllib.parse import unquote

    headers = {}
    for item in raw.split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            headers[key.strip().lower()] = unquote(value.strip())
    return headers


class OtlpHttpSpanExporter(SpanExporter):
    def __init__(
        self, endpoint: str, headers: dict[str, str] | None = None, timeout: float = 10
    ) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self._client = httpx2.Client(
            headers={**(headers or {}), "content-type": "application/x-protobuf"},
            timeout=timeout,
            trust_env=False,
        )
        self._shutdown = False

    def export(self, spans) -> SpanExportResult:
        if self._shutdown:
            return SpanExportResult.FAILURE
        body = encode_spans(spans).SerializeToString()
        delay = 0.5
        for attempt in range(RETRIES):
            try:
                response = self._client.post(self.endpoint, content=body)
            except httpx2.HTTPError as exc:
                log.warning("OTLP export to %s failed: %s", self.endpoint, exc)
            else:
                if response.status_code < 300:
                    return SpanExportResult.SUCCESS
                log.warning("OTLP export to %s: HTTP %s", self.endpoint, response.status_code)
                if response.status_code not in RETRYABLE:
                    return SpanExportResult.FAILURE
            if attempt + 1 < RETRIES:
                time.sleep(delay)
                delay *= 2
        return SpanExportResult.FAILURE

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def shutdown(self) -> None:
        self._shutdown = True
        self._client.close()
