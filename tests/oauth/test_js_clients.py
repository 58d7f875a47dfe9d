"""The TypeScript SDK's OAuth client and mcp-remote (the bridge Claude Desktop users run)
complete the browser flow against a live server, headless Chromium signing in and allowing.
The npm packages are installed into .node-clients/ on first use (pinned versions)."""

import asyncio
import fcntl
import json
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from accounts.models import User
from tests.conftest import free_port
from tests.oauth.conftest import ACCESS_SECONDS, PASSWORD, oauth_browser
from tests.waiting import wait_until_async

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / ".node-clients"
PACKAGES = ["@modelcontextprotocol/sdk@1.32.2", "mcp-remote@0.15.1"]
AUTHORIZE = re.compile(r"(https?://\S+/oauth/authorize\?\S+)")


@pytest.fixture(scope="module")
def node_clients():
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are needed for the TypeScript clients")
    wanted = {
        "sdk": CLIENTS / "node_modules/@modelcontextprotocol/sdk/package.json",
        "mcp-remote": CLIENTS / "node_modules/mcp-remote/package.json",
    }
    CLIENTS.mkdir(exist_ok=True)
    # Parallel test workers (xdist) share the folder: one installs while the others wait.
    with open(CLIENTS / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all(path.exists() for path in wanted.values()):
            subprocess.run(
                ["npm", "install", "--prefix", str(CLIENTS), "--no-audit", "--no-fund", *PACKAGES],
                check=True,
                capture_output=True,
                timeout=300,
            )
    # ESM resolves packages from the script's own directory.
    shutil.copy(Path(__file__).with_name("ts_client.mjs"), CLIENTS / "ts_client.mjs")
    return node


async def consent_in_browser(url: str, email: str, redirect_prefix: str) -> str:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=oauth_browser.CHROMIUM, args=oauth_browser.ARGS
        )
        try:
            page = await browser.new_page()
            return await oauth_browser.sign_in_and_consent(
                page, url, email=email, password=PASSWORD, redirect_prefix=redirect_prefix
            )
        finally:
            await browser.close()


async def read_tagged(stream, tag: str, timeout: float = 60) -> str:
    while True:
        line = (await asyncio.wait_for(stream.readline(), timeout)).decode()
        if not line:
            raise AssertionError(f"the client ended before printing {tag}")
        if line.startswith(tag + " "):
            return line[len(tag) + 1 :].strip()


async def test_the_typescript_sdk_completes_the_oauth_flow(oauth_live, person, node_clients):
    callback = f"http://127.0.0.1:{free_port()}/callback"
    process = await asyncio.create_subprocess_exec(
        node_clients,
        str(CLIENTS / "ts_client.mjs"),
        oauth_live.mcp_url(person.server.slug),
        callback,
        str(ACCESS_SECONDS + 10),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=CLIENTS,
    )
    try:
        authorize = await read_tagged(process.stdout, "AUTHORIZE")
        assert parse_qs(urlsplit(authorize).query)["resource"] == [
            oauth_live.mcp_url(person.server.slug)
        ]
        redirected = await consent_in_browser(authorize, person.user.email, callback)
        code = parse_qs(urlsplit(redirected).query)["code"][0]
        process.stdin.write(code.encode() + b"\n")
        await process.stdin.drain()
        result = json.loads(await read_tagged(process.stdout, "RESULT"))
        assert "echo" in result["tools"]
        assert result["text"] == "You said from typescript"
        assert result["refreshToken"]
        refreshed = json.loads(await read_tagged(process.stdout, "REFRESHED", ACCESS_SECONDS + 30))
        assert refreshed == {"text": "You said after refresh", "newToken": True}
        assert await asyncio.wait_for(process.wait(), 30) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_mcp_remote_completes_its_browser_flow(oauth_live, person, node_clients, tmp_path):
    # One flow takes seconds; a flow that stalls (mcp-remote waits for its callback for ever)
    # is cut at 120 s, so a stall fails the test instead of hanging the suite.
    browser_step: list[str] = []  # what the browser step reached, for a stall's report
    try:
        redirected = await asyncio.wait_for(
            _mcp_remote_flow(oauth_live, person, node_clients, tmp_path / "flow", browser_step),
            120,
        )
    except TimeoutError:
        log = (tmp_path / "flow" / "mcp-remote.log").read_text()
        raise AssertionError(
            f"mcp-remote's flow stalled; the browser step: {browser_step}; its log:\n{log}"
        ) from None
    assert "code=" in redirected and "iss=" in redirected


async def _mcp_remote_flow(oauth_live, person, node_clients, tmp_path, browser_step) -> str:
    tmp_path.mkdir()
    port = free_port()
    errlog_path = tmp_path / "mcp-remote.log"
    params = StdioServerParameters(
        command=node_clients,
        args=[
            str(CLIENTS / "node_modules/mcp-remote/dist/proxy.js"),
            oauth_live.mcp_url(person.server.slug),
            str(port),
        ],
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "MCP_REMOTE_CONFIG_DIR": str(tmp_path / "mcp-auth"),
        },
    )

    def printed() -> str:
        return errlog_path.read_text() if errlog_path.exists() else ""

    async def drive_browser():
        try:
            found = await wait_until_async(
                lambda: AUTHORIZE.search(printed()),
                timeout=60,
                interval=0.2,
                what="mcp-remote to print an authorization URL",
            )
        except AssertionError as failed:
            raise AssertionError(f"{failed}:\n{printed()}") from None
        browser_step.append("authorization URL found; signing in")
        redirected = await consent_in_browser(
            found.group(1), person.user.email, f"http://localhost:{port}/oauth/callback"
        )
        browser_step.append(f"browser closed after the redirect to {redirected}")
        return redirected

    async def use_tools():
        with errlog_path.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                tools = await client.list_tools()
                assert "echo" in {tool.name for tool in tools.tools}
                echoed = await client.call_tool("echo", {"message": "through mcp-remote"})
                assert echoed.content[0].text == "You said through mcp-remote"

    # Side by side: a browser step that fails ends the test at once with its own error, rather
    # than leaving mcp-remote waiting for a callback that never comes.
    browser = asyncio.create_task(drive_browser())
    client = asyncio.create_task(use_tools())
    try:
        await asyncio.wait({browser, client}, return_when=asyncio.FIRST_EXCEPTION)
        if browser.done() and browser.exception() is not None:
            raise browser.exception()
        await client
        return await browser
    finally:
        for task in (browser, client):
            task.cancel()
        await asyncio.gather(browser, client, return_exceptions=True)


@pytest.fixture
def keys_or_oauth(committed, unique):
    """A server that takes API keys or OAuth (`api_key+oauth`)."""
    from servers.definition import import_definition
    from tests.gateway.endpoint.conftest import server_definition

    def make():
        user = User.objects.create_user(f"key-{unique}@example.com", PASSWORD)
        definition = server_definition(f"both-{unique}", auth="api_key+oauth")
        return import_definition(definition, user.personal_organization())

    return committed(make)


async def test_mcp_remote_reports_a_wrong_key_instead_of_opening_a_browser_login(
    oauth_live, keys_or_oauth, node_clients, tmp_path
):
    server = keys_or_oauth
    errlog_path = tmp_path / "mcp-remote.log"
    params = StdioServerParameters(
        command=node_clients,
        args=[
            str(CLIENTS / "node_modules/mcp-remote/dist/proxy.js"),
            oauth_live.mcp_url(server.slug),
            str(free_port()),
            "--header",
            "Authorization:Bearer gmcp_" + "x" * 43,
        ],
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "MCP_REMOTE_CONFIG_DIR": str(tmp_path / "mcp-auth"),
        },
    )

    async def connect():
        with errlog_path.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                await client.list_tools()

    # Before: a 401 sent mcp-remote into discovery and a browser login that waits for ever.
    with pytest.raises(BaseException) as failed:
        await asyncio.wait_for(connect(), 60)
    log = errlog_path.read_text()
    assert not isinstance(failed.value, TimeoutError), log
    assert AUTHORIZE.search(log) is None, log
    assert "Invalid API key" in log, log
