"""A tool acting through the caller's connected account, called over the surfaces beside an MCP
session (REST, Webtools) and inside a code-mode program (getmcp_run_code): the call-log row of
each call names the connection it acted through, as a direct MCP call's row does."""

import asyncio

import httpx2
import pytest

from gateway.agents.codemode import RUN
from servers.definition import import_definition
from tests.connections.conftest import SESSION, client, definition, person_of, text_of

pytestmark = pytest.mark.django_db(transaction=True)

# Two of the program's calls act through the same account: each row names it all the same.
PROGRAM = """
async def main():
    first = await call_tool('my_items', {})
    second = await call_tool('my_items_in_code', {})
    return [first['content'][0]['text'], second['content'][0]['text']]
"""


@pytest.fixture
def surfaces_server(committed, world, oidc_provider, unique):
    """The world's tools on a second server of its organization, with code mode on, so the
    only rows of its call log are those of the surface under test."""

    def make():
        made = definition(f"conn-surfaces-{unique}", oidc_provider.api)
        made["agents"] = {"discovery": {"mode": "on"}, "codeMode": {"enabled": True}}
        return import_definition(made, world.org)

    return committed(make)


def over_rest(live, slug: str, key: str) -> list[str]:
    answers = []
    with httpx2.Client(headers={"authorization": f"Bearer {key}"}, timeout=30) as http:
        for tool in ("my_items", "my_items_in_code"):
            done = http.post(f"{live.url}/mcp/{slug}/tools/{tool}", json={})
            assert done.status_code == 200, done.text
            answers.append(done.text)
    return answers


def over_webtools(live, slug: str, key: str) -> list[str]:
    answers = []
    with httpx2.Client(headers={"authorization": f"Bearer {key}"}, timeout=30) as http:
        for tool in ("my_items", "my_items_in_code"):
            done = http.post(f"{live.url}/webtools/{slug}/", json={"action": tool, "request": {}})
            assert done.json()["status"] == "ok", done.text
            answers.append(done.text)
    return answers


async def in_code_mode(live, slug: str, key: str) -> list[str]:
    async with client(live, slug, key, SESSION) as mcp:
        result = await mcp.call_tool(RUN, {"code": PROGRAM})
    assert not result.is_error, text_of(result)
    return [text_of(result)]


def logged_calls(slug: str, count: int) -> list[tuple[str, str, str]]:
    """(surface, tool, connection) of the server's tools/call rows, once `count` are stored
    (the drain runs here as the beat would)."""
    from activity.drain import drain_call_log
    from activity.models import CallLog
    from tests.waiting import wait_until

    def rows() -> list[tuple[str, str, str]]:
        drain_call_log()
        calls = CallLog.objects.filter(server_slug=slug, method="tools/call")
        return sorted(calls.values_list("surface", "tool", "connection"))

    return wait_until(lambda: len(rows()) >= count and rows(), timeout=30, what="the calls")


@pytest.mark.parametrize(
    ("surface", "expected"),
    [
        ("rest", [("rest", "my_items", "corp"), ("rest", "my_items_in_code", "corp")]),
        (
            "webtools",
            [("webtools", "my_items", "corp"), ("webtools", "my_items_in_code", "corp")],
        ),
        (
            "code mode",
            # The meta-call, which acted through what its program's calls did, and each of those.
            [
                ("mcp", RUN, "corp"),
                ("mcp", "my_items", "corp"),
                ("mcp", "my_items_in_code", "corp"),
            ],
        ),
    ],
)
async def test_a_call_over_another_surface_names_in_the_call_log_the_connection_it_used(
    live, world, surfaces_server, oidc_provider, chromium, surface, expected
):
    # Ada connects her account on a direct MCP call to the world's server.
    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    async with client(live, world.server.slug, world.ada_key, SESSION, ada) as mcp:
        assert "Ada's private note" in text_of(await mcp.call_tool("my_items", {}))
    assert len(ada.asked) == 1

    slug = surfaces_server.slug
    if surface == "rest":
        answers = await asyncio.to_thread(over_rest, live, slug, world.ada_key)
    elif surface == "webtools":
        answers = await asyncio.to_thread(over_webtools, live, slug, world.ada_key)
    else:
        answers = await in_code_mode(live, slug, world.ada_key)
    # Each call acted through her account: each answer holds what only she can see.
    assert all("Ada's private note" in answer for answer in answers), answers

    logged = await asyncio.to_thread(logged_calls, slug, len(expected))
    assert logged == expected
