"""Every MCP call lands in the call log, batched off the hot path, with arguments redacted."""

import time

from activity.drain import drain_call_log
from activity.models import CallLog
from tests.servers.endpoint.mcp_http import RawMcp


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

    deadline = time.time() + 10
    logged = committed(rows)
    while len(logged) < 3 and time.time() < deadline:
        time.sleep(0.3)
        logged = committed(rows)
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
