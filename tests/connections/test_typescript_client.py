"""The official TypeScript SDK as the person's MCP client: it declares URL elicitation, is asked
to open the connect link on its first call of a connection-backed tool, headless Chromium goes
through getmcp's connect page and the provider's consent, the client accepts, and the call
answers with that person's own data (2025-11-25 session: the elicitation and its completion
notice come on the call's own stream)."""

import asyncio
import json
import shutil

import pytest

from connections.models import Connection
from tests.connections.conftest import person_of
from tests.oauth.test_js_clients import CLIENTS, node_clients, read_tagged  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = "ts_elicit_client.mjs"


@pytest.fixture
def ts_client(node_clients):  # noqa: F811
    # ESM resolves the SDK from the script's own directory.
    from pathlib import Path

    shutil.copy(Path(__file__).with_name(SCRIPT), CLIENTS / SCRIPT)
    return node_clients


async def lines_until_done(stream, timeout: float = 60) -> dict[str, list[str]]:
    """The client's tagged lines after the person accepted, by tag, up to DONE; a second
    elicitation fails at once (the client would wait for an answer that never comes)."""
    printed: dict[str, list[str]] = {}
    while True:
        line = (await asyncio.wait_for(stream.readline(), timeout)).decode().strip()
        assert line, f"the client ended before DONE; it printed {printed}"
        tag, _, rest = line.partition(" ")
        assert tag != "ELICIT", f"asked a second time: {rest}"
        if tag == "DONE":
            return printed
        printed.setdefault(tag, []).append(rest)


async def test_the_typescript_sdk_is_asked_to_connect_by_url_and_its_retry_answers_with_the_person_s_data(
    live, world, oidc_provider, chromium, ts_client
):
    ada = await person_of(chromium, live, oidc_provider, world.ada, world.ada_upstream)
    process = await asyncio.create_subprocess_exec(
        ts_client,
        str(CLIENTS / SCRIPT),
        live.mcp_url(world.server.slug),
        world.ada_key,
        "my_items",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=CLIENTS,
    )
    try:
        asked = json.loads(await read_tagged(process.stdout, "ELICIT"))
        assert asked["mode"] == "url"
        assert asked["url"].startswith(f"{live.url}/connections/connect/")
        assert "Corp" in asked["message"] and asked["elicitationId"]
        # Nothing the client is sent carries a token: only the link to getmcp's own page.
        assert "access_token" not in json.dumps(asked)
        await ada.connect(asked["url"])
        process.stdin.write(b"accept\n")
        await process.stdin.drain()
        printed = await lines_until_done(process.stdout)
        # The completion notice names the elicitation; no second elicitation came.
        assert printed["COMPLETE"] == [asked["elicitationId"]]
        first, again = (json.loads(line) for line in printed["RESULT"])
        assert first["round"] == "first" and not first["isError"], first
        assert "Ada's private note" in first["text"]
        assert "Bob's private note" not in first["text"]
        # Connected: the next call goes straight through.
        assert again["round"] == "again" and "Ada's private note" in again["text"], again
        assert await asyncio.wait_for(process.wait(), 30) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    stored = await asyncio.to_thread(
        lambda: Connection.objects.get(provider=world.provider, user=world.ada)
    )
    assert stored.status == Connection.ACTIVE
