import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from activity.models import CallLog

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def calls(server, org, outsider_org):
    rows = []
    for i in range(7):
        rows.append(
            CallLog.objects.create(
                organization=org,
                server=server,
                server_slug=server.slug,
                at=NOW - timedelta(minutes=i),
                method="tools/call",
                tool="echo" if i % 2 else "other",
                outcome="error" if i == 3 else "ok",
                latency_ms=float(i),
                client_name="cursor",
                arguments={"message": "[redacted]"},
            )
        )
    CallLog.objects.create(organization=outsider_org, at=NOW, method="tools/call", tool="echo")
    return rows


def test_calls_are_listed_newest_first_a_page_at_a_time(api, calls):
    first = api.get("/api/calls/?page_size=4").json()
    assert [c["id"] for c in first["results"]] == [c.pk for c in calls[:4]]
    second = api.get(first["next"]).json()
    assert [c["id"] for c in second["results"]] == [c.pk for c in calls[4:]]
    assert second["next"] is None
    row = first["results"][0]
    assert (row["server"], row["organization"], row["clientName"]) == ("weather", "alice", "cursor")
    assert row["arguments"] == {"message": "[redacted]"}


def test_calls_are_filtered_by_server_tool_outcome_and_time(api, calls):
    def ids(query):
        response = api.get(f"/api/calls/?{query}")
        assert response.status_code == 200, response.json()
        return [c["id"] for c in response.json()["results"]]

    assert ids("outcome=error") == [calls[3].pk]
    assert ids("tool=echo&server=weather") == [calls[1].pk, calls[3].pk, calls[5].pk]
    assert ids("from=2026-11-20T11:56:00Z&to=2026-11-20T11:59:00Z") == [
        calls[2].pk,
        calls[3].pk,
        calls[4].pk,
    ]
    assert ids("server=secret-plans") == []


def test_a_bad_filter_names_its_parameter(api, calls):
    response = api.get("/api/calls/?from=yesterday")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["from"]


def test_a_call_is_read_by_id(api, calls):
    assert api.get(f"/api/calls/{calls[0].pk}/").json()["tool"] == "other"


def test_the_csv_export_streams_every_matching_call(api, calls):
    response = api.get("/api/calls.csv?tool=echo")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [r["tool"] for r in rows] == ["echo"] * 3
    assert {r["server_slug"] for r in rows} == {"weather"}


def test_a_bad_csv_filter_answers_json_whatever_was_accepted(api, calls):
    response = api.get("/api/calls.csv?outcome=nope", HTTP_ACCEPT="text/csv")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "outcome": ["must be one of ok, tool_error, error"]
    }


def test_server_analytics_summarize_its_calls(api, calls):
    result = api.get("/api/servers/weather/analytics/?bucket=day").json()
    assert (result["calls"], result["errors"], result["unique_clients"]) == (7, 1, 1)
    assert result["p50_latency_ms"] == 3.0
    assert [t["tool"] for t in result["top_tools"]] == ["other", "echo"]
    assert api.get("/api/servers/weather/analytics/?bucket=week").status_code == 400


def test_organization_analytics_summarize_all_its_servers(api, calls, org):
    result = api.get(f"/api/organizations/{org.slug}/analytics/?outcome=ok").json()
    assert result["calls"] == 6
