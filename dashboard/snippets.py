"""Ready-to-copy client set-ups for one server, filled in with its real URL.

A raw key cannot be shown again after creation, so snippets carry a visible placeholder unless
the page was just given a fresh key."""

import json
import shlex

from django.conf import settings

KEY_PLACEHOLDER = "YOUR_API_KEY"


def endpoint_url(server) -> str:
    return f"{settings.SITE_URL.rstrip('/')}/mcp/{server.slug}"


def _json(value) -> str:
    return json.dumps(value, indent=2)


def client_setups(server, key: str | None = None) -> list[dict]:
    url = endpoint_url(server)
    # An OAuth-only server takes no key: clients sign in in the browser instead.
    needs_key = server.accepts_api_key
    key = key or KEY_PLACEHOLDER
    name = server.slug
    headers = {"Authorization": f"Bearer {key}"} if needs_key else {}

    # Written the way Claude's docs show it; keys and slugs never need shell quoting.
    claude_code = f"claude mcp add --transport http {name} {url}"
    if needs_key:
        claude_code += f' --header "Authorization: Bearer {key}"'

    remote_args = ["-y", "mcp-remote", url]
    if needs_key:
        remote_args += ["--header", f"Authorization: Bearer {key}"]
    claude_desktop = {"mcpServers": {name: {"command": "npx", "args": remote_args}}}

    with_headers = {"url": url, **({"headers": headers} if headers else {})}
    cursor = {"mcpServers": {name: with_headers}}
    vscode = {"servers": {name: {"type": "http", **with_headers}}}
    windsurf = {
        "mcpServers": {name: {"serverUrl": url, **({"headers": headers} if headers else {})}}
    }

    python_headers = f'{{"Authorization": "Bearer {key}"}}' if needs_key else "{}"
    python_sdk = f"""import asyncio

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

URL = "{url}"
HEADERS = {python_headers}


async def main():
    timeout = httpx2.Timeout(30, read=300)
    async with httpx2.AsyncClient(headers=HEADERS, timeout=timeout) as http:
        async with streamable_http_client(URL, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                print([tool.name for tool in tools.tools])


asyncio.run(main())
"""

    auth_line = f" \\\n  -H 'Authorization: Bearer {key}'" if needs_key else ""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "curl", "version": "1.0"},
        },
    }
    curl = (
        f"curl -i {shlex.quote(url)}{auth_line} \\\n"
        "  -H 'Content-Type: application/json' \\\n"
        "  -H 'Accept: application/json, text/event-stream' \\\n"
        f"  -d {shlex.quote(json.dumps(init))}"
    )

    return [
        {
            "id": "claude-code",
            "label": "Claude Code",
            "lang": "shell",
            "code": claude_code,
            "where": "Run in a terminal.",
        },
        {
            "id": "claude-desktop",
            "label": "Claude Desktop",
            "lang": "json",
            "code": _json(claude_desktop),
            "where": "Settings → Developer → Edit config (claude_desktop_config.json). "
            "Bridged through mcp-remote; needs Node.js.",
        },
        {
            "id": "cursor",
            "label": "Cursor",
            "lang": "json",
            "code": _json(cursor),
            "where": "~/.cursor/mcp.json, or .cursor/mcp.json in a project.",
        },
        {
            "id": "vscode",
            "label": "VS Code",
            "lang": "json",
            "code": _json(vscode),
            "where": ".vscode/mcp.json in your workspace.",
        },
        {
            "id": "windsurf",
            "label": "Windsurf",
            "lang": "json",
            "code": _json(windsurf),
            "where": "~/.codeium/windsurf/mcp_config.json.",
        },
        {
            "id": "python",
            "label": "Python SDK",
            "lang": "python",
            "code": python_sdk,
            "where": "pip install mcp, then run this script.",
        },
        {
            "id": "curl",
            "label": "curl",
            "lang": "shell",
            "code": curl,
            "where": "Initializes a session; the Mcp-Session-Id response header identifies it.",
        },
    ]
