"""`GET /mcp/<slug>/.well-known/mcp.json`: the discovery document of seed 000."""

from mcp_protocol.versions import STATELESS, SUPPORTED
from servers.compiled.features import extensions


def discovery_document(snapshot, mount: str | None = None) -> dict:
    """`mount` is the server's path (default /mcp/<slug>; /mcp/<slug>@<version> when pinned)."""
    mount = (mount or f"/mcp/{snapshot.slug}").rstrip("/")
    capabilities = {key: dict(value) for key, value in snapshot.capabilities.items()}
    found = extensions(snapshot)
    if found:
        capabilities["extensions"] = found
    return {
        "mcpVersion": STATELESS,
        "protocolVersions": list(SUPPORTED),
        "serverInfo": {
            "name": snapshot.server_info["name"],
            "version": snapshot.server_info["version"],
        },
        "capabilities": capabilities,
        "transports": [
            {"type": "streamable-http", "endpoint": mount},
            {"type": "sse", "endpoint": f"{mount}/sse"},
        ],
    }
