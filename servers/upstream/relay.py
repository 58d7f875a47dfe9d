"""Resources and prompts of an upstream MCP server, read on behalf of our clients.

The same session rules as tool calls (connection.py): one session per read, the SSRF guard,
health recorded, an unreachable upstream reported by name. Whoever serves an upstream resource
or prompt (a resource or prompt row pointing at an upstream) calls these.
"""

import asyncio
from collections.abc import Awaitable, Callable

from mcp.shared.exceptions import MCPError

from . import health
from .connection import (
    Relay,
    Upstream,
    UpstreamRequestFailed,
    UpstreamUnreachable,
    connect,
    describe,
)

PAGE_CAP = 100


async def _with_session(upstream: Upstream, action: Callable, ctx=None):
    """Open a session, run `action(client)`, close it. UpstreamUnreachable when the upstream
    cannot be used; UpstreamRequestFailed when it answers the request with an error."""
    relay = Relay(ctx) if ctx is not None else None
    try:
        async with asyncio.timeout(upstream.timeout):
            async with connect(upstream, relay) as client:
                try:
                    result = await action(client)
                except MCPError as exc:
                    raise UpstreamRequestFailed(exc.error.code, exc.error.message) from None
    except (UpstreamUnreachable, UpstreamRequestFailed) as exc:
        if isinstance(exc, UpstreamUnreachable):
            await health.arecord(upstream.server_id, upstream.url, ok=False, error=exc.reason)
        raise
    except Exception as exc:
        reason = describe(exc, upstream)
        await health.arecord(upstream.server_id, upstream.url, ok=False, error=reason)
        raise UpstreamUnreachable(reason) from None
    await health.arecord(upstream.server_id, upstream.url, ok=True)
    return result


# Fields of the 2026 revision's results; our clients negotiate their own revision.
_LATER_REVISION_FIELDS = ("resultType", "ttlMs", "cacheScope")


def _dump(model) -> dict:
    data = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    for key in _LATER_REVISION_FIELDS:
        data.pop(key, None)
    return data


async def _all_pages(fetch: Callable[[str | None], Awaitable], key: str) -> list[dict]:
    items: list[dict] = []
    cursor = None
    for _page in range(PAGE_CAP):
        page = _dump(await fetch(cursor))
        items += page.get(key, [])
        cursor = page.get("nextCursor")
        if not cursor:
            break
    return items


async def list_resources(upstream: Upstream) -> list[dict]:
    return await _with_session(
        upstream, lambda c: _all_pages(lambda cur: c.list_resources(cursor=cur), "resources")
    )


async def list_resource_templates(upstream: Upstream) -> list[dict]:
    return await _with_session(
        upstream,
        lambda c: _all_pages(
            lambda cur: c.list_resource_templates(cursor=cur), "resourceTemplates"
        ),
    )


async def list_prompts(upstream: Upstream) -> list[dict]:
    return await _with_session(
        upstream, lambda c: _all_pages(lambda cur: c.list_prompts(cursor=cur), "prompts")
    )


async def read_resource(upstream: Upstream, uri: str, ctx=None) -> dict:
    """The upstream's ReadResourceResult as a dict ({contents: [...]})."""

    async def read(client):
        return _dump(await client.read_resource(uri))

    return await _with_session(upstream, read, ctx)


async def get_prompt(
    upstream: Upstream, name: str, arguments: dict | None = None, ctx=None
) -> dict:
    """The upstream's GetPromptResult as a dict ({description?, messages: [...]})."""

    async def get(client):
        return _dump(
            await client.get_prompt(name, {k: str(v) for k, v in (arguments or {}).items()})
        )

    return await _with_session(upstream, get, ctx)
