"""Tenant isolation at the endpoint: every credential problem is refused, and nothing about
another organization's servers leaks."""

from datetime import timedelta

from django.utils import timezone

from accounts.models import ApiKey
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import wait_until


def list_tools(url, key):
    client = RawMcp(url, key=key)
    response = client.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
    return response


def test_it_asks_for_a_key_with_www_authenticate(asgi_server, tenant):
    response = list_tools(asgi_server.mcp_url(tenant.slug), None)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_it_rejects_a_wrong_key(asgi_server, tenant):
    response = list_tools(asgi_server.mcp_url(tenant.slug), "gmcp_not-a-real-key")
    assert response.status_code == 403
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert response.json()["error"]["message"] == "Invalid API key"


def test_a_wrong_token_that_is_not_key_shaped_still_gets_the_401(asgi_server, tenant):
    response = list_tools(asgi_server.mcp_url(tenant.slug), "not-one-of-ours")
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_it_rejects_a_key_revoked_after_it_was_used(committed, asgi_server, tenant):
    client = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    client.initialize()
    assert client.call("tools/list")["result"]["tools"]
    committed(lambda: ApiKey.objects.get(pk=tenant.key.pk).revoke())
    response, _ = client.request("tools/list")
    assert response.status_code == 403


def test_it_rejects_an_expired_key(committed, asgi_server, tenant):
    _, raw = committed(
        ApiKey.issue, tenant.org, "expired", expires_at=timezone.now() - timedelta(minutes=1)
    )
    assert list_tools(asgi_server.mcp_url(tenant.slug), raw).status_code == 403


def test_it_answers_an_outsiders_key_as_if_the_server_did_not_exist(
    asgi_server, tenant, outsider_tenant
):
    response = list_tools(asgi_server.mcp_url(tenant.slug), outsider_tenant.raw)
    assert response.status_code == 404
    unknown = list_tools(asgi_server.mcp_url("no-such-server-at-all"), outsider_tenant.raw)
    assert unknown.status_code == 404
    assert response.json() == unknown.json()


def test_it_refuses_a_key_limited_to_other_servers(committed, asgi_server, tenant, unique):
    from servers.definition import import_definition
    from tests.gateway.endpoint.conftest import server_definition

    other = committed(import_definition, server_definition(f"o-{unique}"), tenant.org)
    _, raw = committed(ApiKey.issue, tenant.org, "limited", servers=[other])
    assert list_tools(asgi_server.mcp_url(tenant.slug), raw).status_code == 403
    assert list_tools(asgi_server.mcp_url(other.slug), raw).status_code == 200


def test_it_ignores_a_session_id_presented_with_another_key(committed, asgi_server, tenant):
    owner = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    owner.initialize()
    _, second_raw = committed(ApiKey.issue, tenant.org, "second key")
    thief = RawMcp(owner.url, key=second_raw)
    thief.session_id = owner.session_id
    response, _ = thief.request("tools/list")
    assert response.status_code == 404
    still_mine, _ = owner.request("tools/list")
    assert still_mine.status_code == 200


def test_it_keeps_an_outsiders_session_out_of_another_server(asgi_server, tenant, outsider_tenant):
    owner = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    owner.initialize()
    outsider = RawMcp(owner.url, key=outsider_tenant.raw)
    outsider.session_id = owner.session_id
    response, _ = outsider.request("tools/call", {"name": "echo", "arguments": {"message": "x"}})
    assert response.status_code == 404
    assert "You said" not in response.text


def test_it_records_when_a_key_was_last_used(committed, asgi_server, tenant):
    from accounts.tasks import flush_key_usage
    from gateway.endpoint import usage

    client = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    client.initialize()

    def flushed():
        committed(flush_key_usage)
        return committed(lambda: ApiKey.objects.get(pk=tenant.key.pk).last_used_at)

    wait_until(flushed, timeout=usage.FLUSH_SECONDS + 5, interval=0.5, what="last_used_at")


def test_a_refresh_token_sent_as_a_bearer_gets_the_oauth_401_not_the_key_answer(
    asgi_server, tenant
):
    response = list_tools(asgi_server.mcp_url(tenant.slug), "gmcp_rt_" + "r" * 43)
    assert response.status_code == 401
