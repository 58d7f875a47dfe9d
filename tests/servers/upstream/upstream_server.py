"""A real MCP server built with the official SDK, started by the tests in a subprocess.

    python upstream_server.py PORT streamable-http|sse [TOKEN]

With TOKEN, every request must carry `Authorization: Bearer TOKEN` (else 401).
"""

import sys

import mcp_types as types
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel
from starlette.responses import JSONResponse

server = MCPServer(name="upstream-demo", version="0.3.0", instructions="A test upstream.")


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Count to `steps`, reporting progress and logging each step.")
async def count(steps: int, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await ctx.info(f"counted {step}", logger_name="counter")
    return f"counted to {steps}"


class Confirmation(BaseModel):
    confirm: bool
    note: str = ""


@server.tool(description="Ask the user to confirm something.")
async def confirm(question: str, ctx: Context) -> str:
    answer = await ctx.elicit(question, Confirmation)
    if answer.action == "accept":
        return f"accepted: confirm={answer.data.confirm} note={answer.data.note}"
    return f"user chose {answer.action}"


@server.tool(description="Ask the client's model for a haiku.")
async def haiku(topic: str, ctx: Context) -> str:
    result = await ctx.request_context.session.create_message(
        [
            types.SamplingMessage(
                role="user", content=types.TextContent(type="text", text=f"A haiku on {topic}")
            )
        ],
        max_tokens=50,
    )
    return f"model said: {result.content.text}"


@server.tool(description="Sleep for `seconds`, then say so.")
async def nap(seconds: float, ctx: Context) -> str:
    import anyio

    # Said first, so a caller can tell the call has reached the tool (instead of guessing).
    await ctx.info("napping", logger_name="nap")
    await anyio.sleep(seconds)  # deliberate: a slow tool is what `nap` is for
    return f"slept {seconds}"


@server.tool(description="Fail on purpose.")
def broken() -> str:
    raise ValueError("the upstream tool broke")


@server.tool(description="Echo the request's Authorization header back.")
async def whoami(ctx: Context) -> str:
    headers = ctx.headers or {}
    return headers.get("authorization", "(none)")


@server.tool(description="Add a tool named `extra` and tell the client the list changed.")
async def grow(ctx: Context) -> str:
    if server._tool_manager.get_tool("extra") is None:
        server.add_tool(lambda: "extra!", name="extra", description="Added at run time.")
    await ctx.request_context.session.send_tool_list_changed()
    return "grown"


@server.tool(description="Rewrite another tool's description, as a compromised upstream would.")
async def redescribe(tool: str, description: str, ctx: Context) -> str:
    server._tool_manager.get_tool(tool).description = description
    await ctx.request_context.session.send_tool_list_changed()
    return "rewritten"


@server.resource(
    "notes://welcome", name="welcome", description="A welcome note.", mime_type="text/plain"
)
def welcome() -> str:
    return "Welcome aboard."


@server.resource("notes://by-day/{day}", name="day-note", mime_type="text/plain")
def day_note(day: str) -> str:
    return f"Notes of {day}."


@server.prompt(description="Greet someone by name.")
def greet(who: str) -> str:
    return f"Please greet {who} warmly."


class BearerGate:
    def __init__(self, app, token):
        self.app, self.token = app, token

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and self.token:
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode() != f"Bearer {self.token}":
                await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def main():
    port, transport = int(sys.argv[1]), sys.argv[2]
    token = sys.argv[3] if len(sys.argv) > 3 else ""
    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    uvicorn.run(BearerGate(app, token), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
