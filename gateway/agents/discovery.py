"""Progressive discovery: a server with many tools lists a few meta-tools instead of all of them.

On (mode `on`, or `auto` above the threshold), tools/list answers the meta-tools, the pinned
tools and (for clients without Tasks) the long-call tools. A client that asks for everything
(`_meta: {"getmcp/fullList": true}` on tools/list, or `?tools=all` on the endpoint URL) gets
every tool. `getmcp_call_tool` never runs a tool itself: routing.py turns it into the ordinary
tools/call of the named tool before the endpoint dispatches it.
"""

from typing import Any

import orjson

from mcp_protocol.errors import ToolError
from servers.discovery.config import discovery_active
from servers.discovery.names import CALL, DESCRIBE, SEARCH
from servers.discovery.search import MAX_RESULTS

from . import retrieval

FULL_LIST_META = "getmcp/fullList"
SNIPPET_CHARS = 200

META_TOOLS = tuple(
    [
        {
            "name": SEARCH,
            "title": "Search this server's tools",
            "description": "This server has many tools; they are not all listed. Search them "
            "by what you want to do (plain words). Answers the best matches with their names "
            f"and descriptions; then {DESCRIBE} shows one tool's arguments and {CALL} calls it.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do."},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS,
                        "description": "How many tools to answer (default 5).",
                    },
                },
                "required": ["query"],
            },
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
        },
        {
            "name": DESCRIBE,
            "title": "Describe one tool",
            "description": "The full definition of one tool of this server (found with "
            f"{SEARCH}): its description and the JSON Schema of its arguments.",
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "description": "The tool's name."}},
                "required": ["name"],
            },
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
        },
        {
            "name": CALL,
            "title": "Call a tool by name",
            "description": "Call one tool of this server (found with "
            f"{SEARCH}) with its arguments, exactly as if it were listed.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The tool's name."},
                    "arguments": {"type": "object", "description": "The tool's arguments."},
                },
                "required": ["name"],
            },
        },
    ]
)
META_NAMES = frozenset(tool["name"] for tool in META_TOOLS)


def active(snapshot) -> bool:
    return discovery_active(snapshot)


def wants_full_list(params: dict) -> bool:
    meta = params.get("_meta")
    return isinstance(meta, dict) and meta.get(FULL_LIST_META) is True


def listed_tools(snapshot, params: dict, extra=()) -> list:
    """What tools/list shows: every tool, or (discovery on) the meta-tools and pinned tools;
    `extra` (the long-call tools) follows either."""
    if not active(snapshot) or wants_full_list(params):
        tools = list(snapshot.tool_list)
    else:
        pinned = [tool.wire for tool in snapshot.tools.values() if tool.pinned]
        tools = [*(t for t in META_TOOLS if t["name"] not in snapshot.tools), *pinned]
    return tools + [t for t in extra if t["name"] not in snapshot.tools]


def is_meta_call(snapshot, name) -> bool:
    """A call of a meta-tool (a server's own tool of the same name wins)."""
    return name in META_NAMES and name not in snapshot.tools


def _text_result(text: str, structured: dict) -> dict:
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured}


async def search(snapshot, arguments: dict) -> dict:
    query = arguments.get("query")
    limit = arguments.get("limit", 5)
    if not isinstance(query, str) or not query.strip():
        raise ToolError(f"{SEARCH} needs a query: what the tool should do, in plain words.")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RESULTS:
        raise ToolError(f"limit must be a whole number from 1 to {MAX_RESULTS}")
    result = await retrieval.search(snapshot, query, limit)
    found = []
    for candidate in result.candidates:
        wire = snapshot.tools[candidate.name].wire
        entry: dict[str, Any] = {
            "name": candidate.name,
            "description": _snippet(wire.get("description") or ""),
        }
        if wire.get("title"):
            entry["title"] = wire["title"]
        entry["score"] = round(candidate.score, 4)
        found.append(entry)
    if not found:
        text = f"No tool matches {query!r}. Try other words."
    else:
        lines = [f"- {e['name']}: {e['description']}" for e in found]
        text = (
            f"Tools matching {query!r}, best first:\n"
            + "\n".join(lines)
            + f"\n\n{DESCRIBE} shows a tool's arguments; {CALL} calls it."
        )
    return _text_result(text, {"tools": found, "ranking": result.ranking})


def _snippet(description: str) -> str:
    first = description.strip().split("\n", 1)[0]
    return first if len(first) <= SNIPPET_CHARS else first[: SNIPPET_CHARS - 1] + "…"


def describe(snapshot, arguments: dict) -> dict:
    name = arguments.get("name")
    tool = snapshot.tools.get(name) if isinstance(name, str) else None
    if tool is None:
        raise ToolError(f"Unknown tool: {name!r}. Find tools with {SEARCH}.")
    wire = dict(tool.wire)
    text = orjson.dumps(wire, option=orjson.OPT_INDENT_2).decode()
    return _text_result(text, {"tool": wire})


def call_target(arguments) -> tuple[str, dict]:
    """The (name, arguments) a getmcp_call_tool call names; ToolError when malformed."""
    if not isinstance(arguments, dict):
        raise ToolError(f"{CALL} takes {{name, arguments}}")
    name, inner = arguments.get("name"), arguments.get("arguments")
    if not isinstance(name, str) or not name:
        raise ToolError(f"{CALL} needs the name of the tool to call")
    if inner is None:
        inner = {}
    if not isinstance(inner, dict):
        raise ToolError(f"{CALL}: arguments must be an object")
    return name, inner
