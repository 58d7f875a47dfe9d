"""The hot path sends an event for each request to a server while its inspector is open, and
none while nobody watches; refusals carry the reason the gate decided."""

import asyncio

import httpx2
import orjson
import pytest

from getmcp.asgi import application
from infra.redis import async_client
from inspector.watch import events_channel, flag_key

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "inspected-client", "version": "4.2"},
    },
}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"message": "a private thought"}},
}


def headers_for(raw=None, **extra):
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "host": "localhost",
        "user-agent": "inspector-test/1",
        **extra,
    }
    if raw:
        headers["authorization"] = f"Bearer {raw}"
    return headers


async def next_event(pubsub, _unused, timeout=3.0) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise TimeoutError
        message = await pubsub.get_message(timeout=left)
        if message is not None and message["type"] == "message":
            break
    batch = orjson.loads(message["data"])
    assert batch["type"] == "requests"
    (event,) = batch["events"]
    return event


@pytest.fixture
async def listening(tenant, django_db_blocker):
    """A subscriber on the tenant's inspector channel (what a consumer listens to), and an HTTP
    client on the ASGI application in this process."""
    pubsub = async_client().pubsub()
    await pubsub.subscribe(events_channel(tenant.server.pk))
    transport = httpx2.ASGITransport(app=application)
    with django_db_blocker.unblock():
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            yield pubsub, None, http
    await pubsub.aclose()
    await async_client().delete(flag_key(tenant.slug))


async def test_nothing_is_published_while_nobody_watches(tenant, listening):
    pubsub, channel, http = listening
    await async_client().delete(flag_key(tenant.slug))
    answered = await http.post(f"/mcp/{tenant.slug}", json=INIT, headers=headers_for(tenant.raw))
    assert answered.status_code == 200
    with pytest.raises(TimeoutError):
        await next_event(pubsub, channel, timeout=0.7)


async def test_a_watched_call_is_published_with_its_client_and_redacted_arguments(
    tenant, listening
):
    pubsub, channel, http = listening
    await async_client().set(flag_key(tenant.slug), b"1", ex=10)
    url = f"/mcp/{tenant.slug}"
    started = await http.post(url, json=INIT, headers=headers_for(tenant.raw))
    init_event = await next_event(pubsub, channel)
    assert init_event["method"] == "initialize"
    assert init_event["client"]["name"] == "inspected-client"
    assert init_event["revision"] == "2025-11-25"
    headers = headers_for(
        tenant.raw,
        **{
            "mcp-session-id": started.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        },
    )
    answered = await http.post(url, json=CALL, headers=headers)
    assert answered.status_code == 200
    event = await next_event(pubsub, channel)
    assert (event["method"], event["target"], event["status"], event["outcome"]) == (
        "tools/call",
        "echo",
        200,
        "ok",
    )
    assert event["transport"] == "streamable-http"
    assert event["client"] == {
        "name": "inspected-client",
        "version": "4.2",
        "userAgent": "inspector-test/1",
    }
    assert event["credential"] == "test key"
    assert event["latencyMs"] > 0
    assert event["request"]["body"]["params"]["arguments"] == {"message": "[redacted]"}
    assert event["request"]["headers"]["authorization"] == "Bearer ***"
    assert tenant.raw not in str(event)
    assert event["response"]["body"]["result"]["content"][0]["text"] == (
        "You said a private thought"
    )


async def test_a_revoked_key_is_published_with_its_reason(tenant, listening, committed):
    pubsub, channel, http = listening
    await async_client().set(flag_key(tenant.slug), b"1", ex=10)
    await asyncio.to_thread(committed, tenant.key.revoke)
    answered = await http.post(f"/mcp/{tenant.slug}", json=INIT, headers=headers_for(tenant.raw))
    assert answered.status_code == 403  # a key-shaped credential: no OAuth challenge
    event = await next_event(pubsub, channel)
    assert (event["status"], event["outcome"], event["reason"]) == (403, "refused", "revoked_key")
    assert event["reasonText"] == "API key or access token revoked or expired"


async def test_refusals_name_the_key_of_another_organization_and_a_refused_origin(
    tenant, outsider_tenant, listening
):
    pubsub, channel, http = listening
    await async_client().set(flag_key(tenant.slug), b"1", ex=10)
    url = f"/mcp/{tenant.slug}"
    answered = await http.post(url, json=INIT, headers=headers_for(outsider_tenant.raw))
    assert answered.status_code == 404
    assert (await next_event(pubsub, channel))["reason"] == "key_of_other_organization"
    answered = await http.post(
        url, json=INIT, headers=headers_for(tenant.raw, origin="https://evil.example")
    )
    assert answered.status_code == 403
    assert (await next_event(pubsub, channel))["reason"] == "origin_refused"
    answered = await http.post(url, json=INIT, headers=headers_for())
    assert (await next_event(pubsub, channel))["reason"] == "missing_key"
    answered = await http.post(
        url, json=CALL, headers=headers_for(tenant.raw, **{"mcp-session-id": "nope"})
    )
    assert answered.status_code == 404
    assert (await next_event(pubsub, channel))["reason"] == "missing_session"
