"""Security state survives any Redis fault: a revocation or a pause made while Redis is down (or
that Redis never heard of) succeeds, and every process enforces it within the documented bound
(SECURITY_RECHECK_SECONDS, 2 s by default, plus one poll) once Redis answers again, even when
Redis comes back with its old append-only data."""

import time

import httpx2

from tests.waiting import stays

from .harness import REVOKED_KEY, answer_of, mcp_call, wait_until

RECHECK_SECONDS = 2.0  # the default of SECURITY_RECHECK_SECONDS
BOUND = RECHECK_SECONDS + 2.0  # one period, one poll, a request; generous for a loaded CI box


def api(server, tenant, method, path, **kwargs):
    return httpx2.request(
        method,
        f"{server.url}/api/{path}",
        headers={"authorization": f"Token {tenant['token']}"},
        timeout=20,
        **kwargs,
    )


def _served(server, tenant) -> int:
    return mcp_call(server.url, tenant["slug"], tenant["key"]).status_code


def _wait_for_status(server, tenant, status: int) -> float:
    """Seconds until an MCP call answers `status` (503s while Redis is still starting count
    as not yet)."""
    started = time.monotonic()
    wait_until(lambda: _served(server, tenant) == status, timeout=BOUND * 3, what=f"{status}")
    return time.monotonic() - started


def _stays(server, tenant, status: int, seconds: float = 1.5) -> None:
    stays(lambda: _served(server, tenant) == status, seconds, interval=0.2, what=f"{status}")


def test_a_key_revoked_while_redis_is_down_is_refused_within_the_bound_after_redis_returns(stack):
    server, tenant, redis = stack.server, stack.tenant, stack.redis
    assert answer_of(mcp_call(server.url, tenant["slug"], tenant["key"]))["result"]

    redis.kill()  # kill -9: Redis comes back from its append-only file, generations and all
    revoked = api(server, tenant, "DELETE", f"keys/{tenant['key_id']}/")
    assert revoked.status_code == 204, revoked.text

    redis.start()
    elapsed = _wait_for_status(server, tenant, REVOKED_KEY)
    print(f"\nrevoked key refused {elapsed:.2f} s after Redis returned with old data")
    assert elapsed < BOUND
    _stays(server, tenant, REVOKED_KEY)


def test_a_server_paused_while_redis_is_down_stops_serving_within_the_bound(stack):
    server, tenant, redis = stack.server, stack.tenant, stack.redis
    assert _served(server, tenant) == 200

    redis.kill()
    paused = api(server, tenant, "PATCH", f"servers/{tenant['slug']}/", json={"status": "paused"})
    assert paused.status_code == 200, paused.text
    assert paused.json()["status"] == "paused"

    redis.start()
    elapsed = _wait_for_status(server, tenant, 503)
    print(f"\npaused server refused {elapsed:.2f} s after Redis returned with old data")
    answer = mcp_call(server.url, tenant["slug"], tenant["key"]).json()
    assert "paused" in answer["error"]["message"]
    assert elapsed < BOUND
    _stays(server, tenant, 503)


def test_a_revocation_redis_never_heard_of_reaches_a_running_server_within_the_bound(
    fault_database, fault_tenant, fault_redis, start_server, private_django
):
    """Only the change log can carry this one: the live server's Redis never goes down (no
    reconnect to react to; so a server of its own, not the shared one) and never sees a bump,
    because the revoking process talks to a Redis that is not there."""
    server = start_server(database_url=fault_database, redis_url=fault_redis.url())
    tenant = fault_tenant
    assert _served(server, tenant) == 200

    dead_redis = "redis://127.0.0.1:9/0"  # the discard port: nothing listens there
    started = time.monotonic()
    private_django(
        f"from accounts.models import ApiKey\nApiKey.objects.get(pk={tenant['key_id']}).revoke()",
        database_url=fault_database,
        redis_url=dead_redis,
    )
    committed = time.monotonic()
    elapsed = _wait_for_status(server, tenant, REVOKED_KEY)
    print(
        f"\nrevocation behind Redis's back enforced {elapsed:.2f} s after its commit "
        f"(the revoking process took {committed - started:.2f} s)"
    )
    assert elapsed < BOUND
    _stays(server, tenant, REVOKED_KEY)


def test_a_definition_edited_and_a_server_deleted_while_redis_is_down_take_effect_after(stack):
    server, tenant, redis = stack.server, stack.tenant, stack.redis
    slug = tenant["slug"]

    def description() -> str | None:
        response = mcp_call(server.url, slug, tenant["key"], method="tools/list")
        if response.status_code != 200:
            return None
        return answer_of(response)["result"]["tools"][0]["description"]

    assert description() == "Echo a message back."
    tools = api(server, tenant, "GET", f"servers/{slug}/tools/").json()
    tool_id = (tools["results"] if isinstance(tools, dict) else tools)[0]["id"]

    redis.kill()
    edited = api(
        server, tenant, "PATCH", f"servers/{slug}/tools/{tool_id}/",
        json={"description": "Edited while Redis was down."},
    )  # fmt: skip
    assert edited.status_code == 200, edited.text
    redis.start()
    started = time.monotonic()
    wait_until(lambda: description() == "Edited while Redis was down.", timeout=BOUND * 3)
    edited_after = time.monotonic() - started

    redis.kill()
    deleted = api(server, tenant, "DELETE", f"servers/{slug}/")
    assert deleted.status_code == 204, deleted.text
    redis.start()
    gone_after = _wait_for_status(server, tenant, 404)
    print(f"\nedit served after {edited_after:.2f} s, deletion enforced after {gone_after:.2f} s")
    assert edited_after < BOUND and gone_after < BOUND
