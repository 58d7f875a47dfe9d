"""Metrics (Prometheus) and traces (OpenTelemetry) for the platform; docs/observability.md.

- metrics.py   hot-path counters and histograms, incremented in process (no Redis, no SQL)
- asgi.py      the one wrapper the endpoint puts around each /mcp/ and /webtools/ request
- scrape.py    gauges read from Redis and Postgres when Prometheus scrapes, never on a call
- views.py     GET /metrics, behind a bearer token (METRICS_TOKEN)
- multiproc.py PROMETHEUS_MULTIPROC_DIR for several worker processes (gunicorn, uvicorn)
- tracing.py   spans per MCP request and per outbound call, off unless OTLP is configured
- otlp.py      the OTLP/HTTP span exporter, over the project's one HTTP client (httpx2)
"""
