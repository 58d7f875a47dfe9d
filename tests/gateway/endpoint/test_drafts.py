"""A draft server tells its own organization's keys that it is a draft and where to switch it on;
everyone else gets the answer of a slug with no server behind it."""

import time

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from accounts.models import ApiKey, User
from servers.definition import import_definition
from tests.waiting import wait_until

from .conftest import server_definition

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def post(url: str, key: str | None = None) -> httpx2.Response:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    return httpx2.post(url, json=INITIALIZE, headers=headers, timeout=30)


@pytest.fixture
def draft(committed, unique, tenant):
    """A draft server of the tenant's organization."""
    return committed(
        lambda: import_definition(server_definition(f"d-{unique}", status="draft"), tenant.org)
    )


@pytest.fixture
def outsider_key(committed, unique):
    def make():
        user = User.objects.create_user(f"out-{unique}@example.com", "long enough password 1")
        return ApiKey.issue(user.personal_organization(), "outsider")[1]

    return committed(make)


def test_the_owners_key_learns_that_the_server_is_a_draft_and_how_to_activate_it(
    asgi_server, tenant, draft
):
    response = post(asgi_server.mcp_url(draft.slug), tenant.raw)
    assert response.status_code == 403
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert f"MCP server {draft.slug!r} is a draft" in error["message"]
    assert f"/servers/{draft.slug}/" in error["message"]
    assert error["data"]["status"] == "draft"
    assert error["data"]["activateUrl"].endswith(f"/servers/{draft.slug}/")


@pytest.mark.parametrize("who", ["anonymous", "bad key", "outsider"])
def test_everyone_else_gets_the_answer_of_a_slug_with_no_server(
    asgi_server, draft, outsider_key, unique, who
):
    key = {"anonymous": None, "bad key": "gmcp_not-a-real-key", "outsider": outsider_key}[who]
    as_draft = post(asgi_server.mcp_url(draft.slug), key)
    as_unknown = post(asgi_server.mcp_url(f"nobody-{unique}"), key)
    assert as_draft.status_code in (401, 403, 404)
    assert (as_draft.status_code, as_draft.content) == (as_unknown.status_code, as_unknown.content)
    assert b"draft" not in as_draft.content


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_official_python_sdk_shows_the_draft_message(asgi_server, tenant, draft, mode):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {tenant.raw}"})
    client = Client(
        streamable_http_client(asgi_server.mcp_url(draft.slug), http_client=http), mode=mode
    )
    with pytest.raises(BaseException) as caught:
        async with client:
            await client.list_tools()
    error = caught.value
    while isinstance(error, BaseExceptionGroup):  # the SDK's task group wraps it
        error = error.exceptions[0]
    assert isinstance(error, MCPError)
    assert "is a draft: it answers no client until it is activated" in error.message
    assert error.data["activateUrl"].endswith(f"/servers/{draft.slug}/")


def test_once_activated_the_same_key_is_served(asgi_server, committed, tenant, draft):
    def activate():
        draft.status = "active"
        draft.save()

    committed(activate)
    wait_until(lambda: post(asgi_server.mcp_url(draft.slug), tenant.raw).status_code == 200)


async def test_a_repeated_draft_answer_runs_no_sql(tenant, draft, django_db_blocker):
    """The answer comes from the compiled snapshot and the cached credential (no lookup of the
    server or its organization), like a warm call."""
    from getmcp.asgi import application

    from .test_hot_path import count_queries

    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {tenant.raw}",
        "host": "localhost",
    }
    transport = httpx2.ASGITransport(app=application)
    with django_db_blocker.unblock():
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            url = f"/mcp/{draft.slug}"
            first = await http.post(url, json=INITIALIZE, headers=headers)
            assert first.status_code == 403
            # A change another test committed, seen by this process's re-check while the first
            # answer loaded, keeps that load out of the cache (servers/invalidation.py): warm
            # again until three answers in a row come from the caches alone.
            deadline = time.monotonic() + 10
            while True:
                with count_queries() as executed:
                    for _ in range(3):
                        again = await http.post(url, json=INITIALIZE, headers=headers)
                        assert "is a draft" in again.json()["error"]["message"]
                if executed == [] or time.monotonic() > deadline:
                    break
            assert executed == []
