"""The reference side of the benchmark: a FastMCP server with the same `echo` tool as ours.

FastMCP's ordinary streamable HTTP set-up: stateful sessions (Mcp-Session-Id), answers sent as
SSE events, as `fastmcp run --transport http` would serve it. Run it with
`uvicorn bench.fastmcp_server:app`.
"""

from fastmcp import FastMCP

mcp = FastMCP("bench-fastmcp", version="1.0.0")


@mcp.tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


app = mcp.http_app(path="/mcp", transport="http")
