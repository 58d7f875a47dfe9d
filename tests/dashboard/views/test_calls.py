from datetime import timedelta

from django.utils import timezone

from accounts.models import ApiKey, ServiceAccount
from activity.models import CallLog


def log(server, **extra):
    values = {
        "at": timezone.now(),
        "organization": server.organization,
        "server": server,
        "server_slug": server.slug,
        "method": "tools/call",
        "tool": "echo",
        "latency_ms": 12.0,
        "client_name": "claude-code",
        "client_version": "2.1",
    }
    values.update(extra)
    return CallLog.objects.create(**values)


def test_an_empty_call_log_says_what_to_do(member_client):
    assert "No calls yet" in member_client.get("/calls/").content.decode()


def test_the_call_log_lists_only_my_organizations_calls(member_client, server, outsider_server):
    log(server, key_name="laptop")
    log(outsider_server, tool="exfiltrate")
    page = member_client.get("/calls/").content.decode()
    assert "laptop" in page
    assert "exfiltrate" not in page


def test_filters_by_outcome_tool_and_date(member_client, server):
    log(server, outcome="error", error="boom", tool="a")
    log(server, tool="b")
    log(server, tool="c", at=timezone.now() - timedelta(days=10))
    response = member_client.get("/calls/", {"outcome": "error"})
    assert [c.tool for c in response.context["calls"]] == ["a"]
    response = member_client.get("/calls/", {"tool": "b"})
    assert [c.tool for c in response.context["calls"]] == ["b"]
    since = (timezone.now() - timedelta(days=1)).date().isoformat()
    response = member_client.get("/calls/", {"from": since})
    assert sorted(c.tool for c in response.context["calls"]) == ["a", "b"]


def test_a_bad_filter_is_a_400_with_the_field_named_never_a_500(member_client):
    response = member_client.get("/calls/", {"from": "yesterday-ish"})
    assert response.status_code == 400
    assert "from" in response.content.decode()


def test_csv_export_follows_the_filters(member_client, server, outsider_server):
    log(server, tool="kept")
    log(server, tool="dropped", outcome="error")
    log(outsider_server, tool="theirs")
    response = member_client.get("/calls/export.csv", {"outcome": "ok"})
    assert response["Content-Type"] == "text/csv"
    body = b"".join(response.streaming_content).decode()
    assert "kept" in body and "dropped" not in body and "theirs" not in body


def test_analytics_pages_render_charts(member_client, server):
    log(server)
    log(server, outcome="error", latency_ms=100)
    for url in ("/analytics/", f"/servers/{server.slug}/analytics/?range=7d"):
        response = member_client.get(url)
        assert response.status_code == 200
        assert response.context["data"]["calls"] == 2
        assert '<svg class="chart"' in response.content.decode()


def test_tool_names_in_charts_are_escaped(member_client, server):
    log(server, tool="<b>bold</b>")
    page = member_client.get("/analytics/").content.decode()
    assert "<b>bold</b>" not in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page


def test_the_call_log_page_says_whom_each_call_acted_as(member_client, org, user):
    account = ServiceAccount.objects.create(organization=org, name="Nightly", role="member")
    key, _ = ApiKey.issue(org, "deploy", created_by=user, service_account=account)
    common = {"organization": org, "server_slug": "s", "method": "tools/call"}
    CallLog.objects.create(at="2026-11-28T10:00Z", user=user, key_name="laptop", **common)
    CallLog.objects.create(at="2026-11-28T10:01Z", api_key=key, key_name="deploy", **common)
    page = member_client.get("/calls/").content.decode()
    assert "Acts as" in page
    assert user.email in page
    assert "Nightly" in page
