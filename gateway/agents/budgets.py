"""Output budgets: a tools/call result over its budget is cut at a clean boundary, marked, and
kept whole in Redis (results.py) behind a `resource_link` the client reads in pages.

The budget is the smallest of the server's (maxChars, maxTokens x 4), the tool's, and what the
client states in the request's `_meta`: `getmcp/maxResultChars`, or the name Claude Code
reads on tool definitions, `anthropic/maxResultSizeChars`, when a client sends it with a call.
Tokens are estimated as characters / 4 (config.CHARS_PER_TOKEN); no tokenizer is loaded.

What is measured is the result's text: its text blocks joined by blank lines, or, without any,
the JSON of its structuredContent. A cut result keeps its other blocks and drops
structuredContent, which would carry the whole result again.
"""

import orjson

from servers.discovery.config import char_limit, estimate_tokens

from .results import URI_PREFIX, page_uri, store

CLIENT_LIMIT_KEYS = ("getmcp/maxResultChars", "anthropic/maxResultSizeChars")
# A client may lower the budget to this at the least (a marker and a link must still fit).
MIN_CLIENT_CHARS = 500
# Where the cut may move back to for a cleaner boundary (a fraction of the budget).
BOUNDARY_WINDOW = 0.2
JSON_BOUNDARIES = ("},", "],", ",")


def client_limit(params: dict) -> int:
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return 0
    for key in CLIENT_LIMIT_KEYS:
        value = meta.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return max(value, MIN_CLIENT_CHARS)
    return 0


def budget_for(snapshot, tool, params: dict) -> int:
    settings = snapshot.agents
    bounds = [
        char_limit(settings.max_chars, settings.max_tokens),
        tool.budget_chars if tool is not None else 0,
        client_limit(params),
    ]
    bounds = [b for b in bounds if b > 0]
    return min(bounds) if bounds else 0


def result_text(result: dict) -> tuple[str, bool]:
    """(the measured text, whether it comes from text blocks)."""
    texts = [
        block.get("text", "")
        for block in result.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    if texts:
        return "\n\n".join(texts), True
    if result.get("structuredContent") is not None:
        return orjson.dumps(result["structuredContent"]).decode(), False
    return "", True


def clean_cut(text: str, limit: int) -> int:
    """Where to cut `text` to at most `limit` characters: after a line, a JSON element or a
    word within the last fifth of the limit, else exactly at it."""
    floor = int(limit * (1 - BOUNDARY_WINDOW))
    head = text[:limit]
    newline = head.rfind("\n", floor)
    if newline >= 0:
        return newline + 1
    if text.lstrip()[:1] in ("{", "["):
        for mark in JSON_BOUNDARIES:
            at = head.rfind(mark, floor)
            if at >= 0:
                return at + len(mark)
    space = max(head.rfind(" ", floor), head.rfind("\t", floor))
    if space >= 0:
        return space + 1
    return limit


def marker(shown: int, total: int, result_id: str | None, pages: int, ttl: int) -> str:
    head = (
        f"\n\n[getmcp: result truncated: {shown:,} of {total:,} characters shown "
        f"(about {estimate_tokens(total):,} tokens in all)."
    )
    if result_id is None:
        return head + " The whole result is larger than this organization may keep, so it "
        "was not stored.]"
    return (
        head + f" The whole result is kept for {ttl // 60} minutes: read it with resources/read "
        f"{page_uri(result_id, 1)} ({pages} page{'s' if pages != 1 else ''}; each page names "
        "the next).]"
    )


async def hold(served, request, result, tool=...) -> dict:
    """A tools/call result held to its output budget (`apply`); any other answer, a created
    task or a result the client must answer first as it is. `tool`: the tool whose budget
    applies (None: the platform's own tools; ...: the one the request names)."""
    if request.method != "tools/call" or not isinstance(result, dict):
        return result
    if result.get("resultType") not in (None, "complete") or "task" in result:
        return result  # a task was created, or the client must answer first
    snapshot = served.snapshot
    if tool is ...:
        name = request.params.get("name")
        tool = snapshot.tools.get(name) if isinstance(name, str) else None
    return await apply(
        served.redis, snapshot, tool, request.params, result, credential=served.caller.ident
    )


async def apply(redis, snapshot, tool, params: dict, result: dict, *, credential: str) -> dict:
    """The result as the client gets it: itself when within budget, else cut and linked."""
    if not isinstance(result, dict):
        return result
    limit = budget_for(snapshot, tool, params)
    if not limit:
        return result
    text, from_blocks = result_text(result)
    if len(text) <= limit:
        return result
    ttl = snapshot.agents.ttl_seconds
    result_id = await store(
        redis,
        org_id=snapshot.organization_id,
        owner_id=snapshot.owner_id,
        server_id=snapshot.server_id,
        credential=credential,
        text=text,
        page_chars=limit,
        ttl=ttl,
    )
    pages = -(-len(text) // limit)
    # The marker takes room of its own: the text gives it up (a marker naming `limit` shown
    # characters is at least as long as the final one, which names fewer).
    room = max(0, limit - len(marker(limit, len(text), result_id, pages, ttl)))
    cut = clean_cut(text, room) if room else 0
    shown = text[:cut] + marker(cut, len(text), result_id, pages, ttl)
    content = [{"type": "text", "text": shown}]
    if result_id is not None:
        content.append(
            {
                "type": "resource_link",
                "uri": page_uri(result_id, 1),
                "name": f"full-result-{result_id[:8]}",
                "title": "The whole result (page 1)",
                "description": f"{len(text):,} characters in {pages} pages of at most "
                f"{limit:,}; each page's _meta names the next.",
                "mimeType": "text/plain",
            }
        )
    if from_blocks:
        content += [
            block
            for block in result.get("content") or []
            if not (isinstance(block, dict) and block.get("type") == "text")
        ]
    cut_result: dict[str, object] = {"content": content}
    if result.get("isError"):
        cut_result["isError"] = True
    meta = dict(result.get("_meta") or {})
    meta["getmcp/truncated"] = {"totalChars": len(text), "shownChars": cut, "pages": pages}
    cut_result["_meta"] = meta
    return cut_result


def is_result_uri(uri) -> bool:
    return isinstance(uri, str) and uri.startswith(URI_PREFIX)
