"""Per-server rate limits: a window per key per minute, shared by every worker."""

import time

import httpx2

from accounts.models import ApiKey
from infra import keys
from infra.redis import sync_client
from servers.models import Server
from servers.publishing import publish
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


def pinned_webtool(base_url, slug, key):
    return httpx2.post(
        f"{base_url}/webtools/{slug}/",
        json={"action": "echo", "version": "1.0.0", "request": {"message": "pinned"}},
        headers={"authorization": f"Bearer {key}"},
    )


def test_a_webtools_call_that_pins_another_version_is_counted_once(committed, asgi_server, tenant):
    server = committed(Server.objects.get, pk=tenant.server.pk)
    committed(publish, server, "1.0.0")
    committed(publish, server)  # 1.0.1 is served; the calls pin 1.0.0
    committed(limit_to(2), server.pk)
    key, key_id = tenant.raw, tenant.key.pk
    # As above: the calls are made again with a fresh key should a minute boundary fall among
    # them.
    for _ in range(2):
        minute = int(time.time() // 60)
        first = pinned_webtool(asgi_server.url, tenant.slug, key)
        window = sync_client().get(keys.rate_window(server.pk, f"key:{key_id}", minute))
        second = pinned_webtool(asgi_server.url, tenant.slug, key)
        third = pinned_webtool(asgi_server.url, tenant.slug, key)
        if int(time.time() // 60) == minute:
            break
        issued, key = committed(ApiKey.issue, tenant.org, "a key for the next minute")
        key_id = issued.pk
    assert first.json() == {"status": "ok", "data": "You said pinned"}
    assert window == b"1"
    # A limit of two a minute lets two pinned calls through, and refuses the third.
    assert second.status_code == 200
    assert third.status_code == 429 and third.json()["error"]["code"] == "RATE_LIMIT"
