"""`kind: upstream`: a resource of a remote MCP server, read from it on every resources/read.

```yaml
resources:
  - uri: notes://welcome          # our uri, name, title, description, mimeType: free to choose
    name: welcome
    kind: upstream
    config:
      url: https://mcp.example.com/mcp
      transport: streamable-http    # streamable-http | sse
      headers: {Authorization: "Bearer {{ secrets.EXAMPLE_MCP_TOKEN }}"}   # secrets only
      uri: notes://welcome          # the upstream's uri for it (default: the same as ours)
      timeoutSeconds: 30            # the whole read, connecting included
```

The connection follows the upstream tool kind (servers.kinds.upstream): one session per read
through the SSRF guard, health recorded, secrets only in the outbound headers and masked out of
messages. Contents the upstream returns under its uri are returned under ours.
"""

from dataclasses import dataclass
from functools import partial

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import INTERNAL_ERROR, McpError

from ..kinds import upstream as upstream_kind
from ..upstream import config as connection_config

CONFIG_FIELDS = frozenset({"url", "transport", "headers", "uri", "timeoutSeconds"})
DEFAULT_TIMEOUT = 30.0


def validate_config(config: dict, path: str = "config") -> list[str]:
    if not isinstance(config, dict):
        return [f"{path}: must be a mapping"]
    errors = connection_config.validate_fields_and_connection(config, path, fields=CONFIG_FIELDS)
    uri = config.get("uri")
    if uri is not None and (not isinstance(uri, str) or ":" not in uri):
        errors.append(f"{path}.uri: must be the upstream's absolute URI for the resource")
    return errors


@dataclass(frozen=True)
class UpstreamResource(connection_config.UpstreamConnection):
    uri: str
    upstream_uri: str


def compile(resource_def: dict) -> UpstreamResource:
    config = resource_def.get("config") or {}
    connection = connection_config.compile_connection(
        config, resource_def.get("_server"), default_timeout=DEFAULT_TIMEOUT
    )
    uri = resource_def["uri"]
    return UpstreamResource(uri=uri, upstream_uri=config.get("uri") or uri, **connection)


def _failure(uri: str, reason: str) -> McpError:
    return McpError(INTERNAL_ERROR, f"Resource {uri} could not be read: {reason}", {"uri": uri})


async def read(compiled: UpstreamResource, uri: str, ctx: RequestContext) -> list[dict]:
    from ..upstream.relay import read_resource

    result = await upstream_kind.ask(
        compiled,
        ctx,
        lambda upstream: read_resource(upstream, compiled.upstream_uri, ctx),
        partial(_failure, uri),
    )
    contents = []
    for item in result.get("contents") or []:
        if item.get("uri") == compiled.upstream_uri:
            item = {**item, "uri": uri}
        contents.append(item)
    return contents
