"""`kind: upstream`: a tool of a remote MCP server, exposed under this server's name for it.

```yaml
kind: upstream
name: search                     # our name, title, description, annotations: free to change
config:
  url: https://mcp.example.com/mcp
  transport: streamable-http     # streamable-http | sse (the 2024-11-05 HTTP+SSE transport)
  headers:                       # sent on every request; templates over `secrets` only
    Authorization: "Bearer {{ secrets.EXAMPLE_MCP_TOKEN }}"
  tool: web_search               # the upstream's name for the tool
  timeoutSeconds: 300            # the whole call, connecting included
  synced: {...}                  # what the upstream said at the last refresh (servers/upstream)
```

Each call opens a session with the upstream (initialize handshake), calls the tool, relays the
upstream's progress and log notifications and its elicitation/sampling/roots requests to our
client, and closes the session. An upstream that cannot be reached gives a tool error naming
it, and is recorded as unhealthy (servers/upstream/health.py).
"""

from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import Cancelled, InputRequired, McpError, ToolError
from vault.wording import missing_secrets

from ..reach_digest import upstream_reach_config
from ..templating import render_text
from ..upstream.config import (
    UpstreamConnection,
    compile_connection,
    validate_fields_and_connection,
)
from .contract import ToolKind
from .http.config import referenced_secrets

if TYPE_CHECKING:
    from vault.resolve import SecretValues

    from ..upstream.connection import Upstream

CONFIG_FIELDS = frozenset({"url", "transport", "headers", "tool", "timeoutSeconds", "synced"})
CONNECT_TIMEOUT = 30.0


def validate_config(config: dict[str, Any], path: str = "config") -> list[str]:
    if not isinstance(config, dict):
        return [f"{path}: must be a mapping"]
    errors = validate_fields_and_connection(config, path, fields=CONFIG_FIELDS)
    tool = config.get("tool")
    if not isinstance(tool, str) or not tool or len(tool) > 128:
        errors.append(f"{path}.tool: required, the upstream tool's name")
    if "synced" in config and not isinstance(config["synced"], dict):
        errors.append(f"{path}.synced: must be a mapping")
    return errors


@dataclass(frozen=True)
class UpstreamTool(UpstreamConnection):
    name: str
    tool: str


def compile(tool_def: dict[str, Any]) -> UpstreamTool:
    config = tool_def.get("config") or {}
    return UpstreamTool(
        name=tool_def.get("name", ""),
        tool=config["tool"],
        **compile_connection(config, tool_def.get("_server")),
    )


async def secret_values(
    organization_id: int | None, server_id: int | None, names: Iterable[str], test: bool = False
) -> "SecretValues":
    from vault.resolve import SecretValues, asecrets_for

    if organization_id is None:
        values = SecretValues({})
    else:
        values = await asecrets_for(organization_id, server_id, test=test)
    missing = sorted(set(names) - set(values))
    if missing:
        raise ToolError(missing_secrets(missing))
    return values


async def upstream_for(
    compiled: UpstreamConnection, *, test: bool = False, timeout: float | None = None
) -> "Upstream":
    from ..upstream.connection import Upstream

    secrets = await secret_values(
        compiled.organization_id, compiled.server_id, compiled.secret_names, test
    )
    rendered = compiled.render_headers({"secrets": secrets})
    headers = tuple((str(k), render_text(v)) for k, v in rendered.items() if v not in (None, ""))
    return Upstream(
        url=compiled.url,
        transport=compiled.transport,
        headers=headers,
        organization_id=compiled.organization_id,
        server_id=compiled.server_id,
        timeout=timeout or min(compiled.timeout, CONNECT_TIMEOUT),
        secret_values=tuple(secrets.values()),
    )


async def ask(
    compiled: UpstreamConnection,
    ctx: RequestContext,
    request: Callable[["Upstream"], Awaitable[dict[str, Any]]],
    failure: Callable[[str], McpError],
) -> dict[str, Any]:
    """`request(upstream)` made of the upstream of a resource or prompt, within the item's own
    timeout. A secret the headers name but nobody set, an unreachable upstream or its error
    answer is raised as `failure(reason)`, the reason naming the upstream, secrets masked."""
    from ..upstream.connection import UpstreamRequestFailed, UpstreamUnreachable

    test = ctx.use_test_secrets
    try:
        upstream = await upstream_for(compiled, test=test, timeout=compiled.timeout)
    except ToolError as exc:  # a secret the headers name is not set
        raise failure(exc.message) from None
    try:
        return await request(upstream)
    except UpstreamUnreachable as exc:
        raise failure(
            f"upstream MCP server {upstream.label} is unreachable: {exc.reason.rstrip('.')}."
        ) from None
    except UpstreamRequestFailed as exc:
        raise failure(
            f"upstream MCP server {upstream.label} answered {exc.code}: "
            f"{upstream.mask(exc.message)}"
        ) from None


async def call(
    compiled: UpstreamTool, arguments: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    import asyncio

    from ..upstream import health
    from ..upstream.connection import (
        Relay,
        UpstreamRequestFailed,
        UpstreamUnreachable,
        call_tool,
        connect,
        describe,
    )
    from ..upstream.tasks import schedule_refresh

    upstream = await upstream_for(compiled, test=ctx.use_test_secrets)

    async def tools_changed() -> None:
        schedule_refresh(compiled.server_id)

    relay = Relay(ctx, on_tools_changed=tools_changed)
    unreachable = f"Upstream MCP server {upstream.label} is unreachable"
    try:
        async with asyncio.timeout(compiled.timeout):
            async with connect(upstream, relay) as client:
                await health.arecord(compiled.server_id, compiled.url, ok=True)
                return await call_tool(client, compiled.tool, arguments, relay)
    except UpstreamUnreachable as exc:
        await health.arecord(compiled.server_id, compiled.url, ok=False, error=exc.reason)
        raise ToolError(f"{unreachable}: {exc.reason.rstrip('.')}.") from None
    except UpstreamRequestFailed as exc:
        raise ToolError(
            f"Upstream MCP server {upstream.label} refused the call of {compiled.tool!r}: "
            f"{upstream.mask(exc.message)}"
        ) from None
    except TimeoutError:
        raise ToolError(
            f"Upstream MCP server {upstream.label} did not finish {compiled.tool!r} within "
            f"{compiled.timeout:g} seconds."
        ) from None
    except (ToolError, McpError, InputRequired, Cancelled):
        raise
    except Exception as exc:
        # The session broke during the call (the connection dropped, the upstream went away).
        if relay.pending is not None:
            raise relay.pending from None
        reason = describe(exc, upstream)
        await health.arecord(compiled.server_id, compiled.url, ok=False, error=reason)
        raise ToolError(f"{unreachable}: {reason.rstrip('.')}.") from None


class UpstreamKind(ToolKind):
    name = "upstream"
    label = "Upstream MCP server"
    # The upstream's progress, logs and requests to the client are relayed to ours.
    streams_progress = True
    reads_secrets = True  # its headers may name secrets
    has_destinations = True

    def validate_config(self, config: dict[str, Any]) -> list[str]:
        return validate_config(config)

    def secret_names(self, config: dict[str, Any], server_settings: Any = None) -> frozenset[str]:
        return frozenset(referenced_secrets(config))  # its headers'

    def reach_config(self, config: dict[str, Any]) -> Any:
        return upstream_reach_config(config)

    def destinations(self, config: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        yield "config.url", config.get("url")

    def compile(self, tool_def: dict[str, Any]) -> UpstreamTool:
        return compile(tool_def)

    async def call(
        self, compiled: UpstreamTool, arguments: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        return await call(compiled, arguments, ctx)


KIND = UpstreamKind()
