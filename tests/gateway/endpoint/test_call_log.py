"""Every MCP call lands in the call log, batched off the hot path, with arguments redacted."""

from activity.drain import drain_call_log
from activity.models import CallLog
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import wait_until


def test_it_logs_each_call_with_its_outcome_and_key(committed, asgi_server, tenant):
    client = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    client.initialize()
    client.call("tools/call", {"name": "echo", "arguments": {"message": "secret stuff"}})
    client.call("tools/call", {"name": "echo", "arguments": {"message": 3}})
    client.call("tools/call", {"name": "missing", "arguments": {}})

    def rows():
        drain_call_log()
        return list(
            CallLog.objects.filter(server_id=tenant.server.pk, method="tools/call").order_by("at")
        )

    def three_rows():
        found = committed(rows)
        return found if len(found) >= 3 else None

    logged = wait_until(three_rows, interval=0.3, what="three log rows")
    assert [(r.tool, r.outcome) for r in logged] == [
        ("echo", "ok"),
        ("echo", "tool_error"),
        ("missing", "error"),
    ]
    first = logged[0]
    assert first.key_name == "test key"
    assert first.client_name == "raw-test-client"
    assert "secret stuff" not in str(first.arguments)
    assert first.organization_id == tenant.org.pk
