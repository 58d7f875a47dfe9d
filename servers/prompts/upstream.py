"""`kind: upstream`: a prompt of a remote MCP server, got from it on every prompts/get.

```yaml
prompts:
  - name: greet                     # our name, title, description: free to choose
    description: Greet someone by name.
    arguments: [{name: who, required: true}]   # what clients are told; passed on as they come
    kind: upstream
    config:
      url: https://mcp.example.com/mcp
      transport: streamable-http    # streamable-http | sse
      headers: {Authorization: "Bearer {{ secrets.EXAMPLE_MCP_TOKEN }}"}   # secrets only
      prompt: greet                 # the upstream's name for it (default: the same as ours)
      timeoutSeconds: 30            # the whole request, connecting included
```

The connection follows the upstream tool kind (servers.kinds.upstream): one session per get
through the SSRF guard, health recorded, secrets only in the outbound headers and masked out of
messages. The upstream checks the arguments beyond our `required` ones; any failure is a
JSON-RPC -32603 naming the prompt and relaying the upstream's reason (upstreams differ in the
codes they use for bad arguments: the SDK's own server answers 0).
"""

from dataclasses import dataclass
from functools import partial

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import INTERNAL_ERROR, McpError

from ..kinds import upstream as upstream_kind
from ..upstream import config as connection_config

CONFIG_FIELDS = frozenset({"url", "transport", "headers", "prompt", "timeoutSeconds"})
DEFAULT_TIMEOUT = 30.0


def validate_config(config: dict, path: str = "config") -> list[str]:
    if not isinstance(config, dict):
        return [f"{path}: must be a mapping"]
    errors = connection_config.validate_fields_and_connection(config, path, fields=CONFIG_FIELDS)
    name = config.get("prompt")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        errors.append(f"{path}.prompt: must be the upstream's name for the prompt")
    return errors


@dataclass(frozen=True)
class UpstreamPrompt(connection_config.UpstreamConnection):
    name: str
    upstream_name: str
    description: str | None


def compile(prompt_def: dict) -> UpstreamPrompt:
    config = prompt_def.get("config") or {}
    connection = connection_config.compile_connection(
        config, prompt_def.get("_server"), default_timeout=DEFAULT_TIMEOUT
    )
    name = prompt_def["name"]
    return UpstreamPrompt(
        name=name,
        upstream_name=config.get("prompt") or name,
        description=prompt_def.get("description") or None,
        **connection,
    )


def _failure(name: str, reason: str) -> McpError:
    return McpError(INTERNAL_ERROR, f"Prompt {name} could not be got: {reason}", {"name": name})


async def get(compiled: UpstreamPrompt, arguments: dict, ctx: RequestContext) -> dict:
    from ..upstream.relay import get_prompt

    passed = {key: value for key, value in arguments.items() if value is not None}
    result = await upstream_kind.ask(
        compiled,
        ctx,
        lambda upstream: get_prompt(upstream, compiled.upstream_name, passed, ctx),
        partial(_failure, compiled.name),
    )
    out = {"messages": result.get("messages") or []}
    description = compiled.description or result.get("description")
    if description:
        out["description"] = description
    if result.get("_meta"):
        out["_meta"] = result["_meta"]
    return out
