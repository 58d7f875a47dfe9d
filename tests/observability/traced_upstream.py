"""An upstream MCP server (the official SDK) that tells what trace context it was sent.

    python traced_upstream.py PORT

Its one tool, `seen`, answers with the W3C `traceparent` of the HTTP request that carried the
call and the one in the call's `params._meta`.
"""

import json
import sys

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer(name="traced-upstream", version="1.0.0")


@server.tool(description="The trace context this call arrived with.")
def seen(ctx: Context) -> str:
    request = ctx.request_context.request
    meta = ctx.request_context.meta or {}
    return json.dumps(
        {
            "header": request.headers.get("traceparent") if request is not None else None,
            "meta": meta.get("traceparent"),
        }
    )


if __name__ == "__main__":
    app = server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
