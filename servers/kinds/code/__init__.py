"""`kind: code`: a tool written as a function, run in a sandbox.

```yaml
kind: code
config:
  language: python            # the only language so far (see LANGUAGES)
  source: |
    async def main(args, ctx):
        r = await fetch("https://api.example.com/items", headers={"X-Key": secrets["API_KEY"]})
        log("info", f"got {r['status']}")
        return {"count": len(r["json"]["items"])}
  limits: {wallSeconds: 30, cpuSeconds: 5, memoryMb: 64, outputBytes: 262144, hostCalls: 50}
  connections: [github]       # the caller's connected accounts: connections["github"] is their
                              #  token (docs/connected-accounts.md); {provider, scopes} for more
```

Python runs in pydantic-monty (Monty, a Python interpreter written in Rust, in worker
subprocesses: see pool.py); it never runs in this process. No imports of the host (os,
subprocess, socket ...), no files, no reflection: what the code can do is what the host
functions (host.py) give it. `main` may be `async def main(args, ctx)` or `def main(args)`;
its return value becomes the result (result.py); limits are in limits.py.

Another language would be one more entry of LANGUAGES: a module with `check(source)` and
`run(tool, arguments, ctx)` behind the same config shape.
"""

from typing import Any

from mcp_protocol.context import RequestContext

from .config import LANGUAGES, validate_config, validate_on_save
from .limits import Limits
from .tool import CodeTool

__all__ = ["CodeTool", "call", "compile", "validate_config", "validate_on_save"]


def compile(tool_def: dict[str, Any]) -> CodeTool:
    config = tool_def.get("config") or {}
    language = config.get("language", "python")
    runtime = LANGUAGES[language]
    server = tool_def.get("_server") or {}
    return CodeTool(
        name=tool_def.get("name", ""),
        language=language,
        source=runtime.program(config["source"]),
        entry=runtime.entry(config["source"]),
        user_lines=config["source"].rstrip().count("\n") + 1,
        limits=Limits.from_config(
            config.get("limits"), ((server.get("code") or {}).get("limits") or {})
        ),
        secret_names=runtime.referenced_secrets(config["source"]),
        organization_id=server.get("organizationId"),
        server_id=server.get("id"),
        has_output_schema=bool(tool_def.get("outputSchema")),
        owner_id=server.get("ownerId"),
        connections=_connections(config.get("connections") or []),
    )


def _connections(items: list[Any]) -> tuple[Any, ...]:
    if not items:
        return ()
    from connections.requirement import requirement_of

    return tuple(requirement_of(item) for item in items)


async def call(
    compiled: CodeTool, arguments: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    result: dict[str, Any] = await LANGUAGES[compiled.language].run(compiled, arguments, ctx)
    return result
