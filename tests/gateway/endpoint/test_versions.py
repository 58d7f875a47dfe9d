"""Drafts and published versions at the endpoint: the latest published version is served,
a pinned URL never changes under its client, and edits wait for the next publish."""

import httpx2

from servers.models import Server, Tool
from servers.publishing import publish
from tests.gateway.endpoint.mcp_http import RawMcp


def describe_echo(url, key):
    client = RawMcp(url, key=key)
    client.initialize()
    tools = client.call("tools/list")["result"]["tools"]
    return next(t for t in tools if t["name"] == "echo")["description"]


def edit_echo(description):
    def edit(server_pk):
        tool = Tool.objects.get(server_id=server_pk, name="echo")
        tool.description = description
        tool.save()

    return edit


def test_it_serves_published_versions_and_pins(committed, asgi_server, tenant):
    url = asgi_server.mcp_url(tenant.slug)
    server = committed(Server.objects.get, pk=tenant.server.pk)
    assert describe_echo(url, tenant.raw) == "Echo a message back."  # nothing published: draft

    committed(publish, server, "1.0.0")
    committed(edit_echo("Edited in the draft."), server.pk)
    assert describe_echo(url, tenant.raw) == "Echo a message back."  # the draft waits

    committed(publish, server)  # 1.0.1
    assert describe_echo(url, tenant.raw) == "Edited in the draft."
    assert describe_echo(f"{url}@1.0.0", tenant.raw) == "Echo a message back."
    assert describe_echo(f"{url}@1.0.1", tenant.raw) == "Edited in the draft."

    missing = RawMcp(f"{url}@9.9.9", key=tenant.raw).post(
        {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    )
    assert missing.status_code == 404

    headers = {"authorization": f"Bearer {tenant.raw}"}
    old = httpx2.get(f"{asgi_server.url}/webtools/{tenant.slug}/1.0.0", headers=headers).json()
    assert old["version"] == "1.0.0"
    echo = next(a for a in old["actions"] if a["name"] == "echo")
    assert echo["description"] == "Echo a message back."
    gone = httpx2.get(f"{asgi_server.url}/webtools/{tenant.slug}/3.0.0", headers=headers)
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "WEBTOOL_NOT_FOUND"
    called = httpx2.post(
        f"{asgi_server.url}/webtools/{tenant.slug}/",
        json={"action": "echo", "version": "1.0.0", "request": {"message": "pinned"}},
        headers=headers,
    )
    assert called.json() == {"status": "ok", "data": "You said pinned"}


def test_a_pinned_client_follows_the_live_status(committed, asgi_server, tenant):
    server = committed(Server.objects.get, pk=tenant.server.pk)
    committed(publish, server, "1.0.0")

    def pause(pk):
        row = Server.objects.get(pk=pk)
        row.status = "paused"
        row.save()

    committed(pause, server.pk)
    response = RawMcp(f"{asgi_server.mcp_url(tenant.slug)}@1.0.0", key=tenant.raw).post(
        {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    )
    assert response.status_code == 503


def test_a_webtools_body_may_pin_the_version_a_never_published_server_serves(
    committed, asgi_server, tenant
):
    # Nothing is published: the draft is served under the version it names (1.0.0).
    headers = {"authorization": f"Bearer {tenant.raw}"}
    url = f"{asgi_server.url}/webtools/{tenant.slug}/"
    body = {"action": "echo", "version": "1.0.0", "request": {"message": "draft"}}
    called = httpx2.post(url, json=body, headers=headers)
    assert called.json() == {"status": "ok", "data": "You said draft"}

    missing = httpx2.post(url, json={**body, "version": "9.9.9"}, headers=headers)
    assert missing.status_code == 404
    assert missing.json()["error"] == {
        "code": "WEBTOOL_NOT_FOUND",
        "message": f"No webtool {tenant.slug}@9.9.9",
    }
