"""Values Postgres cannot store (NUL, lone surrogates) are escaped in the call log, never
dropped: a NUL in clientInfo.name no longer makes every row of the session vanish."""

import json

from activity.drain import drain_call_log
from activity.models import CallLog
from tests.gateway.endpoint.conftest import server_definition
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import becomes


def logged_rows(committed, server_id, expected: int) -> list:
    def rows():
        drain_call_log()
        return list(CallLog.objects.filter(server_id=server_id).order_by("at"))

    found: list = []

    def enough():
        found[:] = committed(rows)
        return len(found) >= expected

    becomes(enough, timeout=15, interval=0.3)  # the caller's assertion names what is missing
    return found


def test_a_nul_in_client_info_and_arguments_is_escaped_and_every_row_is_kept(
    committed, asgi_server, attacker
):
    definition = server_definition("unused")
    tenant = attacker(logArguments=True, tools=definition["tools"][:1])
    client = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    # Raw JSON text: "\u0000" and a lone surrogate, exactly as a hostile client sends them.
    initialize = (
        '{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {'
        '"protocolVersion": "2025-11-25", "capabilities": {},'
        ' "clientInfo": {"name": "evil\\u0000client", "version": "1\\u0000"}}}'
    )
    response = client.http.post(client.url, content=initialize, headers=client.headers())
    assert response.status_code == 200, response.text
    client.session_id = response.headers["mcp-session-id"]
    client.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    client.call("tools/call", {"name": "echo", "arguments": {"message": "nul\x00here"}})
    client.call("tools/call", {"name": "echo", "arguments": {"message\x00key": "x"}})
    client.call("ping")

    rows = logged_rows(committed, tenant.server.pk, expected=4)
    methods = [row.method for row in rows]
    assert methods.count("tools/call") == 2 and "ping" in methods, methods
    assert {row.client_name for row in rows if row.method != "initialize"} == {"evil\\u0000client"}
    calls = [row for row in rows if row.method == "tools/call"]
    assert calls[0].arguments == {"message": "nul\\u0000here"}
    assert calls[1].arguments == {"message\\u0000key": "x"}


def test_a_lone_surrogate_over_rest_is_kept_escaped(committed, asgi_server, attacker):
    import httpx2

    tenant = attacker(logArguments=True, tools=server_definition("unused")["tools"][:1])
    response = httpx2.post(
        f"{asgi_server.url}/mcp/{tenant.slug}/tools/echo",
        content=json.dumps({"message": "half \ud800 a pair"}),
        headers={"authorization": f"Bearer {tenant.raw}", "content-type": "application/json"},
    )
    assert response.status_code in (200, 400)
    rows = logged_rows(committed, tenant.server.pk, expected=1)
    assert rows, "the call vanished from the log"
