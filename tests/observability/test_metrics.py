"""The hot-path counters keep their labels bounded: methods from a fixed set, server slugs up
to METRICS_MAX_SERVERS per process; tracing without an endpoint does nothing at all."""

import os

from observability import metrics, multiproc, tracing


def sample(name, **labels):
    return metrics.REGISTRY.get_sample_value(name, labels)


def test_slugs_beyond_the_cap_are_counted_under_other(settings):
    settings.METRICS_MAX_SERVERS = len(metrics._servers) + 1
    before = sample(
        "getmcp_mcp_requests_total", server="_other", method="ping", surface="mcp", status="ok"
    )
    metrics.observe_call("cap-first", "ping", "mcp", "ok", 0.001)
    metrics.observe_call("cap-second", "ping", "mcp", "ok", 0.001)
    metrics.observe_call("cap-third", "ping", "mcp", "ok", 0.001)
    labels = {"method": "ping", "surface": "mcp", "status": "ok"}
    assert sample("getmcp_mcp_requests_total", server="cap-first", **labels) == 1
    assert sample("getmcp_mcp_requests_total", server="cap-second", **labels) is None
    assert sample("getmcp_mcp_requests_total", server="_other", **labels) == (before or 0) + 2


def test_a_method_outside_mcp_is_counted_as_other():
    metrics.observe_call("odd-methods", "x/" + "y" * 50, "mcp", "error", 0.001)
    labels = {"server": "odd-methods", "surface": "mcp", "status": "error"}
    assert sample("getmcp_mcp_requests_total", method="other", **labels) == 1


def test_without_an_otlp_endpoint_tracing_is_off_and_its_hooks_do_nothing(settings):
    assert not settings.OTEL_EXPORTER_OTLP_ENDPOINT
    assert tracing.ENABLED is False
    tracing.begin(object(), object())  # would fail on the gate if it looked at it
    tracing.finish(200)
    with tracing.upstream_call("tools/call", "x") as meta:
        assert meta is None


def test_preparing_for_several_workers_empties_the_shared_directory(tmp_path, monkeypatch):
    (tmp_path / "counter_123.db").write_bytes(b"old")
    monkeypatch.setenv(multiproc.ENV, str(tmp_path))
    assert multiproc.prepare(2) == str(tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert os.environ[multiproc.ENV] == str(tmp_path)


def test_one_worker_needs_no_shared_directory(monkeypatch):
    monkeypatch.delenv(multiproc.ENV, raising=False)
    assert multiproc.prepare(1) is None
    assert multiproc.ENV not in os.environ
