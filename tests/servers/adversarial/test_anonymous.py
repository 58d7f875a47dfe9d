"""An anonymous caller (or one with a bad key, or another organization's key) gets one answer
for an unknown slug, a draft, a paused server and a protected server; the owner's key still
learns the real state, and `auth: none` servers keep working without a key."""

import httpx2
import pytest

from servers.models import Server
from tests.gateway.endpoint.conftest import server_definition

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
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


def post(url, key=None, origin=None, message=PING):
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    if origin:
        headers["origin"] = origin
    return httpx2.post(url, json=message, headers=headers, timeout=30)


def shape(response: httpx2.Response) -> tuple:
    keep = ("www-authenticate", "content-type", "access-control-allow-origin", "retry-after")
    return (
        response.status_code,
        tuple((name, response.headers.get(name)) for name in keep),
        response.content,
    )


@pytest.fixture
def servers(committed, attacker, unique):
    """Four slugs: unknown, draft, paused (protected) and running (protected)."""
    running = attacker(tools=server_definition("x")["tools"][:1])

    def make():
        from servers.definition import import_definition

        made = {}
        for status in ("draft", "paused"):
            definition = server_definition(f"{status[0]}-{unique}", status=status)
            made[status] = import_definition(definition, running.org).slug
        return made

    slugs = committed(make)
    return running, {
        "unknown": f"nobody-{unique}",
        "draft": slugs["draft"],
        "paused": slugs["paused"],
        "protected": running.slug,
    }


@pytest.mark.parametrize("credential", ["none", "bad key", "other org's key"])
def test_an_outsider_gets_one_answer_for_unknown_draft_paused_and_protected(
    asgi_server, servers, victim, credential
):
    running, slugs = servers
    key = {"none": None, "bad key": "gmcp_not-a-real-key", "other org's key": victim.key}[
        credential
    ]
    answers = {name: shape(post(asgi_server.mcp_url(slug), key)) for name, slug in slugs.items()}
    assert len(set(answers.values())) == 1, answers
    status = next(iter(answers.values()))[0]
    # A key-shaped bad key gets 403 "Invalid API key" (gate.bad_api_key), on every slug alike.
    assert status == {"none": 401, "bad key": 403, "other org's key": 404}[credential]


def test_with_an_allowed_origin_the_answers_are_the_same_too(asgi_server, servers):
    _, slugs = servers
    answers = {
        name: shape(post(asgi_server.mcp_url(slug), origin=asgi_server.url))
        for name, slug in slugs.items()
    }
    assert len(set(answers.values())) == 1, answers
    preflights = {
        name: httpx2.options(
            asgi_server.mcp_url(slug),
            headers={"origin": asgi_server.url, "access-control-request-method": "POST"},
        ).status_code
        for name, slug in slugs.items()
    }
    assert set(preflights.values()) == {204}, preflights


def test_the_anonymous_answer_asks_for_a_key(asgi_server, servers):
    _, slugs = servers
    response = post(asgi_server.mcp_url(slugs["unknown"]))
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="getmcp"'


def test_the_owner_still_learns_paused_draft_and_unknown(asgi_server, servers):
    running, slugs = servers
    assert post(asgi_server.mcp_url(slugs["paused"]), running.raw).status_code == 503
    draft = post(asgi_server.mcp_url(slugs["draft"]), running.raw)
    assert draft.status_code == 403 and "is a draft" in draft.json()["error"]["message"]
    assert post(asgi_server.mcp_url(slugs["unknown"]), running.raw).status_code == 404
    running_answer = post(asgi_server.mcp_url(slugs["protected"]), running.raw, message=INITIALIZE)
    assert running_answer.status_code == 200


def test_a_public_server_works_without_a_key_and_shows_its_pause(committed, asgi_server, servers):
    running, _ = servers

    def set_auth(mode, status):
        Server.objects.filter(pk=running.server.pk).update(auth_mode=mode, status=status)
        from servers.changes import bump_server

        bump_server(running.slug)

    committed(set_auth, "none", "active")
    assert post(asgi_server.mcp_url(running.slug), message=INITIALIZE).status_code == 200
    committed(set_auth, "none", "paused")
    assert post(asgi_server.mcp_url(running.slug)).status_code == 503
