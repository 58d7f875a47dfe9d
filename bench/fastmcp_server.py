"""The reference side of the benchmark: a FastMCP server with the same `echo` tool as ours.

FastMCP's ordinary streamable HTTP set-up: stateful sessions (Mcp-Session-Id), each answer sent
as an SSE event, as `fastmcp run --transport http` serves it. BENCH_FASTMCP_JSON=1 switches on
its plain-JSON answers instead, the shape getmcp uses for a static tool. Run it with
`uvicorn bench.fastmcp_server:app`.
"""

import os

from fastmcp import FastMCP

mcp = FastMCP("bench-fastmcp", version="1.0.0")


@mcp.tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


app = mcp.http_app(
    path="/mcp", transport="http", json_response=os.environ.get("BENCH_FASTMCP_JSON") == "1"
)
