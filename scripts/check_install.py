"""Proves a production install works: run it with the python of a virtualenv that holds the
project installed WITHOUT extras (`make check-install` builds one).

    python scripts/check_install.py

1. Sets Django up and imports every module of every package the project ships (a module that
   imports something only the `dev` extra installs fails here, by name).
2. Starts a real upstream MCP server (the official SDK's MCPServer, from the project's own
   runtime dependencies) in a subprocess on loopback, defines a server with an upstream tool
   relaying it, serves getmcp with uvicorn on loopback and calls that tool over /mcp.

It uses embedded mode (SQLite in a temporary directory, in-process Redis and Celery) unless
DATABASE_URL/REDIS_URL are set, and allows loopback through OUTBOUND_ALLOWED_NETWORKS.
`python scripts/check_install.py --upstream PORT` is the upstream server itself.
"""

import asyncio
import importlib
import importlib.metadata
import os
import pkgutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback

# The packages `pip install .` ships, when the distribution cannot say (an old setuptools).
PACKAGES = [
    "accounts",
    "activity",
    "api",
    "dashboard",
    "gateway",
    "getmcp",
    "infra",
    "integrations",
    "mcp_protocol",
    "mcptasks",
    "servers",
    "vault",
]
SUM = "add"


def serve_upstream(port: int) -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name="check-install-upstream", version="1.0.0")

    @server.tool(name=SUM, description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    server.run(transport="streamable-http", host="127.0.0.1", port=port)


def shipped_packages() -> list[str]:
    try:
        listed = importlib.metadata.distribution("getmcp").read_text("top_level.txt") or ""
    except importlib.metadata.PackageNotFoundError:
        sys.exit("getmcp is not installed in this interpreter's environment")
    names = sorted({line.strip() for line in listed.splitlines() if line.strip()})
    return names or PACKAGES


def import_everything() -> int:
    failures = []
    count = 0
    for package_name in shipped_packages():
        package = importlib.import_module(package_name)
        names = [package_name]
        names += [
            info.name for info in pkgutil.walk_packages(package.__path__, prefix=package_name + ".")
        ]
        for name in names:
            try:
                importlib.import_module(name)
                count += 1
            except Exception:
                failures.append(f"{name}:\n{traceback.format_exc(limit=3)}")
    if failures:
        print("These modules do not import in a production install:", file=sys.stderr)
        for failure in failures:
            print(f"- {failure}", file=sys.stderr)
        sys.exit(1)
    return count


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen | None = None, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            sys.exit(f"the upstream server exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"nothing listened on 127.0.0.1:{port} within {seconds:.0f} seconds")


def define_server(upstream_url: str) -> str:
    """A user, a published server relaying the upstream's tool, and a key; returns the key."""
    from accounts.models import ApiKey, User
    from servers.definition import import_definition
    from servers.publishing import publish_import

    user = User.objects.create_user("check-install@example.com", "check-install-password")
    org = user.personal_organization()
    server = import_definition(
        {
            "slug": "check-install",
            "name": "Check install",
            "tools": [
                {
                    "name": "plus",
                    "description": "The upstream's add.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                        "required": ["a", "b"],
                    },
                    "kind": "upstream",
                    "config": {"url": upstream_url, "tool": SUM, "timeoutSeconds": 30},
                }
            ],
        },
        org,
        user=user,
    )
    publish_import(server, user=user)
    _key, raw = ApiKey.issue(org, "check-install", [server], created_by=user)
    return raw


def rpc_answer(response) -> dict:
    import orjson

    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = orjson.loads(line[5:])
                if "id" in message:
                    return message
        raise AssertionError(f"no JSON-RPC answer in the stream: {response.text[:500]}")
    return response.json()


async def call_through_getmcp(port: int, key: str) -> dict:
    import httpx2
    import uvicorn

    from getmcp.asgi import application

    config = uvicorn.Config(application, host="127.0.0.1", port=port, log_level="warning")
    web = uvicorn.Server(config)
    serving = asyncio.create_task(web.serve())
    try:
        while not web.started:
            if serving.done():
                serving.result()
                raise RuntimeError("uvicorn stopped before it started")
            await asyncio.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp/check-install"
        headers = {
            "authorization": f"Bearer {key}",
            "accept": "application/json, text/event-stream",
        }
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            hello = await http.post(
                url,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "check-install", "version": "1"},
                    },
                },
            )
            hello.raise_for_status()
            session = {
                "mcp-session-id": hello.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            await http.post(
                url,
                headers=session,
                json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            )
            called = await http.post(
                url,
                headers=session,
                json={
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "plus", "arguments": {"a": 2, "b": 40}},
                },
            )
            return rpc_answer(called)
    finally:
        web.should_exit = True
        await serving


def main() -> None:
    if sys.argv[1:2] == ["--upstream"]:
        serve_upstream(int(sys.argv[2]))
        return
    workdir = tempfile.mkdtemp(prefix="getmcp-check-install-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{workdir}/db.sqlite3")
    os.environ["OUTBOUND_ALLOWED_NETWORKS"] = "127.0.0.0/8"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "getmcp.settings")

    import django

    django.setup()
    count = import_everything()
    print(f"imported {count} modules of {', '.join(shipped_packages())}")

    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    upstream_port = free_port()
    upstream = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--upstream", str(upstream_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(upstream_port, upstream)
        key = define_server(f"http://127.0.0.1:{upstream_port}/mcp")
        answer = asyncio.run(call_through_getmcp(free_port(), key))
    finally:
        upstream.terminate()
        upstream.wait(timeout=10)
    result = answer.get("result") or {}
    texts = [part.get("text") for part in result.get("content", [])]
    if result.get("isError") or "42" not in texts:
        sys.exit(f"the upstream tool call through getmcp went wrong: {answer}")
    print("an upstream tool call through getmcp answered 2 + 40 = 42")


if __name__ == "__main__":
    main()
