"""A warm tools/call of a code tool runs no SQL, its secret included (the vault cache)."""

import httpx2

from getmcp.asgi import application
from tests.gateway.endpoint.mcp_http import messages_of
from tests.gateway.endpoint.test_hot_path import INIT, count_queries

from .live import code_tool_def, make_tenant

CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "keyed", "arguments": {}},
}


async def test_a_warm_code_tool_call_with_a_secret_runs_no_sql(
    committed, unique, django_db_blocker
):
    from asgiref.sync import sync_to_async

    tenant = await sync_to_async(make_tenant)(
        committed,
        f"code-hot-{unique}",
        [code_tool_def("keyed", "def main(args):\n    return len(secrets['TOKEN'])\n")],
        {"TOKEN": "twelve chars"},
    )
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {tenant.raw}",
        "host": "localhost",
    }
    transport = httpx2.ASGITransport(app=application)
    with django_db_blocker.unblock():
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            url = f"/mcp/{tenant.slug}"
            started = await http.post(url, json=INIT, headers=headers)
            headers["mcp-session-id"] = started.headers["mcp-session-id"]
            headers["mcp-protocol-version"] = "2025-11-25"
            cold = await http.post(url, json=CALL, headers=headers)
            assert messages_of(cold)[-1]["result"]["content"][0]["text"] == "12"
            with count_queries() as executed:
                for _ in range(3):
                    warm = await http.post(url, json=CALL, headers=headers)
                    assert messages_of(warm)[-1]["result"]["content"][0]["text"] == "12"
            assert executed == []
