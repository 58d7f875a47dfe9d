"""Per-server rate limits: a window per key per minute, shared by every worker."""

import time

import httpx2

from accounts.models import ApiKey
from servers.models import Server
from tests.gateway.endpoint.mcp_http import RawMcp


def limit_to(per_minute):
    def apply(pk):
        server = Server.objects.get(pk=pk)
        server.rate_limit_per_minute = per_minute
        server.save()

    return apply


def test_it_answers_429_past_the_limit_per_key(committed, asgi_server, tenant):
    committed(limit_to(3), tenant.server.pk)
    # Windows are wall-clock minutes. Rather than wait for a fresh one, the four calls are made
    # again with a fresh key (a window of its own) should a minute boundary fall among them.
    key = tenant.raw
    for _ in range(2):
        minute = int(time.time() // 60)
        client = RawMcp(asgi_server.mcp_url(tenant.slug), key=key)
        client.initialize()  # initialize and notifications/initialized: 2 calls
        ok, _ = client.request("ping")
        limited, _ = client.request("ping")
        webtool = httpx2.post(
            f"{asgi_server.url}/webtools/{tenant.slug}/",
            json={"action": "echo", "request": {"message": "x"}},
            headers={"authorization": f"Bearer {key}"},
        )
        if int(time.time() // 60) == minute:
            break
        _, key = committed(ApiKey.issue, tenant.org, "a key for the next minute")
    assert ok.status_code == 200
    assert limited.status_code == 429
    assert 0 < int(limited.headers["retry-after"]) <= 60
    assert "Rate limit of 3" in limited.json()["error"]["message"]

    _, other_raw = committed(ApiKey.issue, tenant.org, "another key")
    other = RawMcp(client.url, key=other_raw)
    assert (
        other.post(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "o", "version": "1"},
                },
            }
        ).status_code
        == 200
    )
    assert webtool.status_code == 429 and webtool.json()["error"]["code"] == "RATE_LIMIT"
