"""Quotas and limits (servers/quotas.py) through two live worker processes sharing one Redis:
counters are shared, an over-limit call gets 429 with Retry-After and its JSON-RPC error (on
the stream too, for the legacy SSE transport), and a refused call uses no quota."""

import time

import httpx2
import pytest

from accounts.models import ApiKey, Organization
from tests.conftest import LiveServer
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.gateway.endpoint.test_legacy_sse import StreamReader
from tests.gateway.endpoint.test_tasks import Modern


@pytest.fixture(scope="module")
def second_server(live_database):
    server = LiveServer(live_database)
    yield server
    server.stop()


@pytest.fixture
def inside_one_minute():
    # Every call of a per-minute test must fall in one window (the monthly test needs no wait).
    # Deliberate: the live server's windows follow the wall clock, which no test can move.
    if time.time() % 60 > 45:
        time.sleep(61 - time.time() % 60)


def rest_call(base: str, slug: str, raw: str, tool="echo") -> httpx2.Response:
    return httpx2.post(
        f"{base}/mcp/{slug}/tools/{tool}",
        json={"message": "hi"},
        headers={"authorization": f"Bearer {raw}"},
        timeout=30,
    )


def limited_key(committed, tenant, limits):
    def make():
        key, raw = ApiKey.issue(tenant.org, "limited", created_by=tenant.user)
        key.limits = limits
        key.save()
        return raw

    return committed(make)


@pytest.mark.usefixtures("inside_one_minute")
def test_a_keys_calls_per_minute_are_counted_across_workers(
    committed, asgi_server, second_server, tenant
):
    raw = limited_key(committed, tenant, {"perMinute": 3})
    workers = [asgi_server.url, second_server.url, asgi_server.url]
    assert [rest_call(w, tenant.slug, raw).status_code for w in workers] == [200, 200, 200]

    refused = rest_call(second_server.url, tenant.slug, raw)
    assert refused.status_code == 429
    assert 0 < int(refused.headers["retry-after"]) <= 60
    error = refused.json()["error"]
    assert error["code"] == -32000
    assert "limit of 3 calls per minute" in error["message"]

    # Listing is not a tool call; and another key has its own window.
    lister = RawMcp(asgi_server.mcp_url(tenant.slug), key=raw)
    lister.initialize()
    assert lister.call("tools/list")["result"]["tools"]
    assert rest_call(second_server.url, tenant.slug, tenant.raw).status_code == 200


@pytest.mark.usefixtures("inside_one_minute")
def test_a_per_tool_limit_leaves_the_other_tools_alone(committed, asgi_server, tenant):
    raw = limited_key(committed, tenant, {"tools": {"echo": 1}})
    assert rest_call(asgi_server.url, tenant.slug, raw).status_code == 200
    refused = rest_call(asgi_server.url, tenant.slug, raw)
    assert refused.status_code == 429
    assert "calls per minute of echo" in refused.json()["error"]["message"]
    assert rest_call(asgi_server.url, tenant.slug, raw, tool="slow_steps").status_code == 200


def test_the_monthly_quota_is_shared_by_keys_sessions_and_workers_and_refuses_with_the_id(
    committed, asgi_server, second_server, tenant
):
    def set_quota():
        # Through save, like the dashboard and API: the snapshots of its servers recompile.
        org = Organization.objects.get(pk=tenant.org.pk)
        org.monthly_call_quota = 3
        org.save()

    session = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    session.initialize()  # the server's snapshot is compiled (cached) before the quota is set
    committed(set_quota)
    other_raw = limited_key(committed, tenant, {})

    assert "result" in session.call("tools/call", {"name": "echo", "arguments": {"message": "1"}})
    # A reconnect, on the other worker, with another key of the organization.
    again = RawMcp(second_server.mcp_url(tenant.slug), key=other_raw)
    again.initialize()
    assert "result" in again.call("tools/call", {"name": "echo", "arguments": {"message": "2"}})
    assert rest_call(second_server.url, tenant.slug, tenant.raw).status_code == 200

    response, messages = session.request("tools/call", {"name": "echo", "arguments": {}})
    assert response.status_code == 429
    assert int(response.headers["retry-after"]) > 60  # the first of next month
    assert messages[-1]["id"] == session._next_id
    assert "monthly quota of 3 tool calls" in messages[-1]["error"]["message"]

    # The 2026-07-28 era answers the same, with its request's id; Webtools in its own shape.
    modern = Modern(second_server.mcp_url(tenant.slug), tenant.raw, capabilities={})
    status, message = modern.send("tools/call", {"name": "echo", "arguments": {"message": "x"}})
    assert status == 429 and message["id"] == modern.next_id
    assert message["error"]["code"] == -32000
    webtool = httpx2.post(
        f"{asgi_server.url}/webtools/{tenant.slug}/",
        json={"action": "echo", "request": {"message": "x"}},
        headers={"authorization": f"Bearer {tenant.raw}"},
    )
    assert webtool.status_code == 429 and webtool.json()["error"]["code"] == "RATE_LIMIT"

    # Refused calls used nothing: the usage endpoint says 3 of 3.
    from servers.quotas import usage

    org = committed(Organization.objects.get, pk=tenant.org.pk)
    assert committed(usage, org)["calls"] == 3


@pytest.mark.usefixtures("inside_one_minute")
def test_over_the_limit_on_the_legacy_sse_transport_the_error_also_goes_on_the_stream(
    committed, asgi_server, tenant
):
    raw = limited_key(committed, tenant, {"perMinute": 1})
    url = asgi_server.mcp_url(tenant.slug)
    reader = StreamReader(url + "/sse", raw)
    assert reader.wait_for("endpoint")
    endpoint = reader.text.split("data: ", 1)[1].split("\n", 1)[0].strip()
    post_url = asgi_server.url + endpoint
    headers = {"authorization": f"Bearer {raw}", "content-type": "application/json"}

    def call(request_id):
        body = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "sse"}},
        }
        return httpx2.post(post_url, json=body, headers=headers, timeout=30)

    try:
        assert call(1).status_code in (200, 202)
        refused = call(2)
        assert refused.status_code == 429 and "retry-after" in refused.headers
        assert reader.wait_for('"id":2')
        streamed = [line for line in reader.text.splitlines() if '"id":2' in line]
        assert "limit of 1 calls per minute" in streamed[0]
    finally:
        reader.close()  # its thread must not outlive the test


def test_calls_of_an_organization_without_a_quota_show_in_usage_equal_to_analytics(
    committed, asgi_server, second_server, tenant, client
):
    from activity.drain import drain_call_log
    from activity.queries import organization_analytics
    from servers.quotas import usage
    from tests.api.conftest import client_for
    from tests.waiting import wait_until

    org = committed(Organization.objects.get, pk=tenant.org.pk)
    assert org.monthly_call_quota is None and committed(usage, org)["monthlyCallQuota"] is None
    session = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    session.initialize()
    for n in range(3):
        reply = session.call("tools/call", {"name": "echo", "arguments": {"message": str(n)}})
        assert "result" in reply
    assert session.call("tools/list")["result"]["tools"]  # not a tool call
    unknown = session.call("tools/call", {"name": "no_such_tool", "arguments": {}})
    assert "error" in unknown or unknown["result"].get("isError")  # answered, never counted
    assert rest_call(second_server.url, tenant.slug, tenant.raw).status_code == 200
    assert rest_call(asgi_server.url, tenant.slug, tenant.raw).status_code == 200
    session.http.close()

    # Each worker pushes its counts with its call log, within CALL_LOG_FLUSH_SECONDS.
    wait_until(lambda: committed(usage, org)["calls"] == 5, timeout=30, what="usage of 5 calls")

    def tool_calls_in_analytics() -> int:
        committed(drain_call_log)
        data = committed(organization_analytics, org)
        return sum(row["calls"] for row in data["top_tools"] if row["tool"] == "echo")

    wait_until(lambda: tool_calls_in_analytics() == 5, timeout=30, what="5 echo calls drained")

    def read_api():
        api = client_for(tenant.user)
        return api.get(f"/api/organizations/{org.slug}/usage/").json()

    assert committed(read_api)["calls"] == 5

    def read_page():
        client.force_login(tenant.user)
        return client.get("/usage/")

    page = committed(read_page)
    assert page.status_code == 200
    assert page.context["usage"]["calls"] == 5
    assert 'data-testid="calls">5</p>' in page.content.decode()
