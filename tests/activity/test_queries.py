import csv
import io
import statistics
from datetime import UTC, datetime

import pytest
from django.db import connection

from activity import queries
from activity.models import CallLog
from activity.queries import CallFilters, FilterError


def test_filters_narrow_calls_by_server_tool_outcome_and_time(server, other_server, make_call, now):
    hit = make_call(server, minutes_ago=10, tool="forecast", outcome="error")
    make_call(server, minutes_ago=10, tool="forecast", outcome="ok")
    make_call(server, minutes_ago=10, tool="alerts", outcome="error")
    make_call(other_server, minutes_ago=10, tool="forecast", outcome="error")
    make_call(server, minutes_ago=600, tool="forecast", outcome="error")

    filters = CallFilters.from_params(
        {
            "server": "weather",
            "tool": "forecast",
            "outcome": "error",
            "from": "2026-11-20T11:00:00Z",
            "to": "2026-11-20",
        }
    )
    calls = CallLog.objects.filter(organization_id=server.organization_id)
    assert list(filters.apply(calls)) == [hit]


def test_a_date_as_upper_bound_includes_that_whole_day(server, make_call):
    late = make_call(server, minutes_ago=-600)  # 22:00 the same day
    filters = CallFilters.from_params({"from": "2026-11-20", "to": "2026-11-20"})
    calls = CallLog.objects.filter(organization_id=server.organization_id)
    assert list(filters.apply(calls)) == [late]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"outcome": "meh"}, "outcome"),
        ({"surface": "ftp"}, "surface"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-45"}, "to"),
        ({"key": "abc"}, "key"),
    ],
)
def test_bad_filter_values_name_their_parameter(params, field):
    with pytest.raises(FilterError) as caught:
        CallFilters.from_params(params)
    assert caught.value.field == field


def test_analytics_count_calls_errors_percentiles_tools_and_clients(server, make_call):
    latencies = [float(n) for n in range(1, 21)]
    for i, latency in enumerate(latencies):
        make_call(
            server,
            minutes_ago=90 if i < 5 else 10,
            tool="forecast" if i % 2 else "alerts",
            outcome="error" if i < 2 else ("tool_error" if i == 2 else "ok"),
            latency_ms=latency,
            client_name="claude-code" if i < 15 else "cursor",
            client_version="1.0",
        )

    result = queries.server_analytics(server)

    assert (result["calls"], result["errors"], result["tool_errors"]) == (20, 2, 1)
    assert result["error_rate"] == 0.15
    assert result["p50_latency_ms"] == pytest.approx(
        statistics.quantiles(latencies, n=100, method="inclusive")[49]
    )
    assert result["p95_latency_ms"] == pytest.approx(19.05)
    assert result["avg_latency_ms"] == 10.5
    assert result["unique_clients"] == 2
    assert result["series"] == [
        {"at": "2026-11-20T10:00:00+00:00", "calls": 5, "failed": 3},
        {"at": "2026-11-20T11:00:00+00:00", "calls": 15, "failed": 0},
    ]
    assert [(t["tool"], t["calls"]) for t in result["top_tools"]] == [
        ("alerts", 10),
        ("forecast", 10),
    ]
    assert result["clients"] == [
        {"name": "claude-code", "version": "1.0", "calls": 15},
        {"name": "cursor", "version": "1.0", "calls": 5},
    ]


def test_the_python_percentile_agrees_with_postgres(server, make_call):
    values = [3.0, 1.0, 40.0, 7.5, 2.25, 99.0, 0.5]
    for v in values:
        make_call(server, latency_ms=v)
    assert connection.vendor == "postgresql"
    p50, p95 = queries.latency_percentiles(CallLog.objects.filter(server=server))
    assert queries._percentile(sorted(values), 0.5) == pytest.approx(p50)
    assert queries._percentile(sorted(values), 0.95) == pytest.approx(p95)


def test_analytics_of_an_organization_span_its_servers_and_days(
    server, other_server, org, make_call
):
    make_call(server)
    make_call(other_server, minutes_ago=24 * 60)
    result = queries.organization_analytics(org, bucket="day")
    assert result["calls"] == 2
    assert [row["calls"] for row in result["series"]] == [1, 1]


def test_hours_without_calls_appear_in_the_series_as_zeros(server, make_call):
    make_call(server, minutes_ago=0)
    make_call(server, minutes_ago=180)
    series = queries.server_analytics(server)["series"]
    assert [(row["at"][11:16], row["calls"]) for row in series] == [
        ("09:00", 1),
        ("10:00", 0),
        ("11:00", 0),
        ("12:00", 1),
    ]


def test_analytics_of_no_calls_are_zeros_not_errors(server):
    result = queries.server_analytics(server)
    assert (result["calls"], result["error_rate"], result["p95_latency_ms"]) == (0, 0.0, None)


def test_an_unknown_bucket_is_refused(server):
    with pytest.raises(FilterError):
        queries.server_analytics(server, bucket="minute")


def test_the_csv_export_has_a_header_every_row_and_no_formulas(server, make_call):
    make_call(server, tool="forecast", error='=HYPERLINK("http://evil")', outcome="error")
    make_call(server, tool="alerts", client_name="cursor, the editor")

    text = "".join(queries.csv_lines(CallLog.objects.filter(server=server)))
    rows = list(csv.reader(io.StringIO(text)))

    assert rows[0] == list(queries.CSV_COLUMNS)
    assert len(rows) == 3
    by_tool = {row[4]: dict(zip(rows[0], row, strict=True)) for row in rows[1:]}
    assert by_tool["forecast"]["error"] == '\'=HYPERLINK("http://evil")'
    assert by_tool["alerts"]["client_name"] == "cursor, the editor"
    assert datetime.fromisoformat(by_tool["alerts"]["at"]) == datetime(2026, 11, 20, 12, tzinfo=UTC)
