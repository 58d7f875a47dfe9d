"""What the platform records and exports: call log, audit log, metrics, traces."""

from .parsing import BASE_DIR, Variables, var


class RecordVariables(Variables):
    """The call log and the audit log."""

    CALL_LOG_RETENTION_DAYS: int = var(
        30,
        "call-log rows older than this are purged hourly (organizations can override)",
    )
    # What a SIGKILL of a web process can lose is bounded by the flush interval; SIGTERM
    # flushes, retrying Redis for up to the shutdown budget.
    CALL_LOG_FLUSH_SECONDS: float = var(
        1.0,
        "how often a web process pushes its buffered call-log rows to Redis; a `SIGKILL` "
        "loses at most this much (see [docs/operations.md](docs/operations.md))",
    )
    CALL_LOG_SHUTDOWN_FLUSH_SECONDS: float = var(
        10,
        "on `SIGTERM`, how long a web process keeps trying to push its buffered rows to Redis",
    )
    CALL_LOG_STREAM_MAX_ROWS: int = var(
        1_000_000,
        "call-log rows waiting in Redis (a long Postgres outage) beyond this give way, oldest "
        "first",
    )
    AUDIT_RETENTION_DAYS: int = var(
        365,
        "audit-log rows older than this are purged hourly, keeping the chain verifiable; `0` "
        "keeps all ([docs/audit.md](docs/audit.md))",
    )
    # Never stored in the database; new rows are MACed with the first key, every listed one
    # still verifies (rotation: put a new one in front). Unset: one key derived from
    # SECRET_KEY (HKDF), id "sk-<fingerprint>".
    AUDIT_MAC_KEYS: list[str] = var(
        [],
        "comma-separated `id:secret` HMAC keys of the audit chain, newest first (older ones "
        "still verify; the entry `derived` stands for the key derived from `SECRET_KEY`); set "
        "it in production, outside the database's reach ([docs/audit.md](docs/audit.md))",
        shown="unset: derived from `SECRET_KEY`",
    )
    AUDIT_CHECKPOINT_DIR: str = var(
        str(BASE_DIR / "var" / "audit-checkpoints"),
        "where signed checkpoints of the audit chains' heads are written (storage the "
        "database's holders cannot write); `audit verify` checks against the newest, so "
        "deleting the newest rows is noticed; empty: none",
        shown="`var/audit-checkpoints`",
    )
    AUDIT_CHECKPOINT_SECONDS: float = var(
        300,
        "how often Celery beat writes an audit checkpoint (rows newer than the last one are "
        "not covered against truncation)",
    )


class ObservabilityVariables(Variables):
    """Metrics and traces (docs/observability.md)."""

    METRICS_TOKEN: str = var(
        "",
        "bearer token a Prometheus scraper sends to `GET /metrics` (`Authorization: Bearer "
        "…`); see [docs/observability.md](docs/observability.md)",
        shown="empty: `/metrics` is off (a JSON 404 says how to turn it on)",
    )
    METRICS_MAX_SERVERS: int = var(
        200,
        "distinct server slugs a process labels request counters with (later ones count as "
        "`_other`)",
    )
    OTEL_EXPORTER_OTLP_ENDPOINT: str = var(
        "",
        "an OTLP/HTTP collector's base URL (spans to `<it>/v1/traces`); see "
        "[docs/observability.md](docs/observability.md)",
        shown="empty: tracing off",
    )
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: str = var(
        "",
        "the full OTLP/HTTP traces URL, instead of the base URL",
        shown="empty: tracing off",
    )
    OTEL_EXPORTER_OTLP_HEADERS: str = var("", "`key=value,...` headers sent with each export")
    OTEL_SERVICE_NAME: str = var("getmcp", "the spans' `service.name`")
    # A recorded span is not free (docs/observability.md).
    TRACES_SAMPLE_RATIO: float = var(
        0.1,
        "share of calls without a sampled caller `traceparent` that are traced (when "
        "`OTEL_TRACES_SAMPLER` is unset)",
    )
    OTEL_TRACES_SAMPLER: str = var(
        "",
        "OpenTelemetry's standard sampler variable: when set, the SDK's sampler (with "
        "`OTEL_TRACES_SAMPLER_ARG`) decides instead of `TRACES_SAMPLE_RATIO`",
        shown="unset",
    )
