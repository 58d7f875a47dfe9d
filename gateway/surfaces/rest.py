"""`POST /mcp/<slug>/tools/<name>`: a tool called with its arguments as the JSON body.

200 `{"result": value}` · 400 `{"error", "errors": [{"path", "message"}]}` for arguments that do
not match the tool's inputSchema · 404 `{"error"}` for an unknown tool · 500 `{"error"}` when the
tool fails (its message, which is meant for the caller) or the server does.
"""

import logging

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import INVALID_PARAMS, InputRequired, McpError
from servers.methods import call_method

from .arguments import input_errors
from .results import plain_value, text_of

log = logging.getLogger(__name__)


async def call_tool_rest(snapshot, name: str, body, ctx: RequestContext) -> tuple[int, dict]:
    tool = snapshot.tools.get(name)
    if tool is None:
        return 404, {"error": f"Unknown tool: {name}"}
    if body is None:
        body = {}
    if not isinstance(body, dict):
        return 400, {
            "error": "The request body must be a JSON object of the tool's arguments",
            "errors": [{"path": "/", "message": "must be an object"}],
        }
    errors = input_errors(tool, body)
    if errors:
        return 400, {"error": f"Invalid arguments for tool {name}", "errors": errors}
    try:
        result = await call_method(snapshot, "tools/call", {"name": name, "arguments": body}, ctx)
    except InputRequired:
        return 500, {"error": f"Tool {name} needs answers from an MCP client; call it over MCP"}
    except McpError as exc:
        status = 400 if exc.code == INVALID_PARAMS else 500
        return status, {"error": exc.message}
    except Exception:
        log.exception("REST call of %s/%s failed", snapshot.slug, name)
        return 500, {"error": "Internal error"}
    if result.get("isError"):
        return 500, {"error": text_of(result) or f"Tool {name} failed"}
    return 200, {"result": plain_value(tool, result)}
