"""What every stateless result carries: `resultType`, the server's identity and, where the
result may be cached, `ttlMs`/`cacheScope`."""

from typing import Any

from django.conf import settings

from mcp_protocol import versions
from servers.snapshot import Snapshot

from .envelope import META_SERVER_INFO

CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)


def cache_hints(snapshot: Snapshot) -> dict[str, Any]:
    # A server behind keys may answer differently per key: never share it across credentials.
    scope = "public" if snapshot.auth_mode == "none" else "private"
    return {"ttlMs": settings.MCP_CACHE_TTL_MS, "cacheScope": scope}


def decorate(snapshot: Snapshot, method: str, result: dict[str, Any]) -> dict[str, Any]:
    result = dict(result)
    result.setdefault("resultType", "complete")
    meta = dict(result.get("_meta") or {})
    meta[META_SERVER_INFO] = snapshot.server_info
    result["_meta"] = meta
    if method in CACHEABLE and result["resultType"] == "complete":
        result.update(cache_hints(snapshot))
    return result


def discover(snapshot: Snapshot) -> dict[str, Any]:
    result = {
        "supportedVersions": list(versions.SUPPORTED),
        "capabilities": dict(snapshot.capabilities),
    }
    if snapshot.instructions:
        result["instructions"] = snapshot.instructions
    return result
