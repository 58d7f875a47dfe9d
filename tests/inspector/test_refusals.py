"""Every refusal the issue names reaches the open inspector of the server it was for, with its
exact reason: a live uvicorn serves the requests, the inspector's socket is open on it with the
owner's dashboard session, and each refused request must arrive there as an event."""

import json
from types import SimpleNamespace

import httpx2
import pytest

from accounts.models import ApiKey, Membership, User
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition

from .conftest import watching

VERSION = "2025-11-25"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "refused-client", "version": "1.0"},
    },
}


def headers(key=None, **extra) -> dict:
    found = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if key:
        found["authorization"] = f"Bearer {key}"
    found.update({name.replace("_", "-"): value for name, value in extra.items()})
    return found


def call(name: str, id_=2) -> dict:
    params = {"name": name, "arguments": {"message": "x"}}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


async def session(http, url, key) -> dict:
    """Headers of a fresh session opened with `key`."""
    opened = await http.post(url, json=INIT, headers=headers(key))
    assert opened.status_code == 200, opened.text
    return headers(
        key, mcp_session_id=opened.headers["mcp-session-id"], mcp_protocol_version=VERSION
    )


async def missing_key(http, url, case):
    return await http.post(url, json=INIT, headers=headers())


async def unknown_key(http, url, case):
    return await http.post(url, json=INIT, headers=headers("gmcp_" + "z" * 43))


async def revoked_key(http, url, case):
    return await http.post(url, json=INIT, headers=headers(case.revoked))


async def suspended_key(http, url, case):
    return await http.post(url, json=INIT, headers=headers(case.suspended))


async def key_of_other_organization(http, url, case):
    return await http.post(url, json=INIT, headers=headers(case.outsider))


async def key_limited_to_other_servers(http, url, case):
    return await http.post(url, json=INIT, headers=headers(case.elsewhere))


async def origin_refused(http, url, case):
    return await http.post(url, json=INIT, headers=headers(case.key, origin="https://evil.example"))


async def unsupported_protocol_version(http, url, case):
    opened = await session(http, url, case.key)
    opened["mcp-protocol-version"] = "1999-01-01"
    return await http.post(url, json=call("echo"), headers=opened)


async def unsupported_protocol_version_on_a_stream(http, url, case):
    opened = await session(http, url, case.key)
    opened |= {"mcp-protocol-version": "1999-01-01", "accept": "text/event-stream"}
    return await http.get(url, headers=opened)


async def missing_session(http, url, case):
    lost = headers(case.key, mcp_session_id="no-such-session", mcp_protocol_version=VERSION)
    return await http.post(url, json=call("echo"), headers=lost)


async def body_too_large(http, url, case):
    body = json.dumps(call("echo") | {"padding": "x" * (4 * 1024 * 1024 + 1)})
    return await http.post(url, content=body, headers=headers(case.key))


async def rate_limited(http, url, case):
    for _ in range(2):
        answered = await http.post(url, json=INIT, headers=headers(case.key))
    return answered


async def tool_access_refused(http, url, case):
    opened = await session(http, url, case.limited)
    return await http.post(url, json=call("slow_steps"), headers=opened)


# reason -> (the request, the HTTP status it gets, the server it is sent to)
CASES = {
    "missing_key": (missing_key, 401, "main"),
    # Key-shaped: 403 "Invalid API key", no OAuth challenge (gateway.endpoint.gate.bad_api_key).
    "unknown_key": (unknown_key, 403, "main"),
    "revoked_key": (revoked_key, 403, "main"),
    "suspended_key": (suspended_key, 403, "main"),
    "key_of_other_organization": (key_of_other_organization, 404, "main"),
    "key_limited_to_other_servers": (key_limited_to_other_servers, 403, "main"),
    "origin_refused": (origin_refused, 403, "main"),
    "unsupported_protocol_version": (unsupported_protocol_version, 400, "main"),
    "unsupported_protocol_version on a GET stream": (
        unsupported_protocol_version_on_a_stream,
        400,
        "main",
    ),
    "missing_session": (missing_session, 404, "main"),
    "body_too_large": (body_too_large, 413, "main"),
    "rate_limited": (rate_limited, 429, "limited"),
    "tool_access_refused": (tool_access_refused, 200, "main"),
}


@pytest.fixture
def servers(tenant, outsider_tenant, committed, unique):
    def make():
        org = tenant.org
        other = import_definition(server_definition(f"other-{unique}"), org)
        limited = import_definition(server_definition(f"rl-{unique}", rateLimitPerMinute=1), org)
        _, elsewhere = ApiKey.issue(org, "for the other server", servers=[other])
        revoked_key, revoked = ApiKey.issue(org, "revoked")
        revoked_key.revoke()
        # A key whose creator has since left the organization.
        leaver = User.objects.create_user(f"leaver-{unique}@example.com", "long enough password 1")
        Membership.objects.create(organization=org, user=leaver, role=Membership.MEMBER)
        _, suspended = ApiKey.issue(org, "a leaver's", created_by=leaver)
        Membership.objects.filter(organization=org, user=leaver).delete()
        limited_key, limited_raw = ApiKey.issue(org, "echo only")
        limited_key.access = {str(tenant.server.pk): {"tools": ["echo"]}}
        limited_key.save()
        return SimpleNamespace(
            slugs={"main": tenant.slug, "limited": limited.slug},
            key=tenant.raw,
            revoked=revoked,
            suspended=suspended,
            outsider=outsider_tenant.raw,
            elsewhere=elsewhere,
            limited=limited_raw,
        )

    return committed(make)


@pytest.mark.parametrize("label", list(CASES))
async def test_a_refused_request_reaches_the_servers_inspector_with_its_reason(
    label, asgi_server, servers, owner_cookie
):
    request, status, which = CASES[label]
    reason = label.split(" ", 1)[0]
    slug = servers.slugs[which]
    url = asgi_server.mcp_url(slug)
    async with (
        watching(asgi_server, slug, owner_cookie) as watch,
        httpx2.AsyncClient(timeout=30) as http,
    ):
        answered = await request(http, url, servers)
        assert answered.status_code == status, answered.text
        event = await watch.event(lambda e: e["outcome"] != "ok")
    assert (event["reason"], event["outcome"], event["status"]) == (reason, "refused", status)
    assert event["reasonText"]
    assert event["server"] == slug
    shown = json.dumps(event)
    for secret in (
        servers.key,
        servers.revoked,
        servers.suspended,
        servers.outsider,
        servers.elsewhere,
    ):
        assert secret not in shown
