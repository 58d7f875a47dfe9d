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
```

Python runs in pydantic-monty (Monty, a Python interpreter written in Rust, in worker
subprocesses: see pool.py); it never runs in this process. No imports of the host (os,
subprocess, socket ...), no files, no reflection: what the code can do is what the host
functions (host.py) give it. `main` may be `async def main(args, ctx)` or `def main(args)`;
its return value becomes the result (result.py); limits are in limits.py.

Another language would be one more entry of LANGUAGES: a module with `check(source)` and
`run(tool, arguments, ctx)` behind the same config shape.
"""

from dataclasses import dataclass

from .config import LANGUAGES, validate_config, validate_on_save
from .limits import Limits

__all__ = ["CodeTool", "call", "compile", "validate_config", "validate_on_save"]


@dataclass(frozen=True, slots=True)
class CodeTool:
    name: str
    language: str
    source: str  # the module followed by the driver that calls main
    entry: object
    user_lines: int  # lines of the tool's own source; the driver follows them
    limits: Limits
    secret_names: frozenset
    organization_id: int | None
    server_id: int | None
    has_output_schema: bool


def compile(tool_def: dict) -> CodeTool:
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
    )


async def call(compiled: CodeTool, arguments: dict, ctx) -> dict:
    return await LANGUAGES[compiled.language].run(compiled, arguments, ctx)
