"""A bench peer: the official Python SDK's (`mcp` >= 2) MCPServer with the same `echo` tool.

Its ordinary streamable HTTP set-up with stateful sessions and plain-JSON answers
(json_response=True), the shape getmcp answers a static tool with. Run it with
`uvicorn bench.python_sdk_server:app`.
"""

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench-python-sdk")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


app = mcp.streamable_http_app(json_response=True)
