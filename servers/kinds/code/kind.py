"""The code kind's contract (servers/kinds/contract.py)."""

from types import MappingProxyType
from typing import Any

from mcp_protocol.context import RequestContext

from ..contract import ToolKind
from . import call, compile
from .config import LANGUAGES, validate_config, validate_on_save
from .limits import validate_server_settings
from .tool import CodeTool

# What the source editor starts with for a new code tool.
SOURCE_EXAMPLE = """async def main(args, ctx):
    # Host functions: fetch, secrets["NAME"], log, progress, elicit, sample, call_tool.
    log("info", f"called with {args}")
    return {"echo": args}
"""


class CodeKind(ToolKind):
    name = "code"
    label = "Code (Python)"
    streams_progress = True  # log, progress, elicit, sample host functions
    reads_secrets = True  # secrets["NAME"]
    reports_host_calls = True
    server_settings = "code"  # limits every code tool of the server stays within
    config_example = MappingProxyType(
        {"language": "python", "limits": {"wallSeconds": 30, "cpuSeconds": 5}}
    )
    form_template = "dashboard/kinds/code.html"
    form_source_key = "source"
    form_source_example = SOURCE_EXAMPLE

    def validate_config(self, config: dict[str, Any]) -> list[str]:
        return validate_config(config)

    def validate_on_save(self, config: dict[str, Any]) -> list[str]:
        return validate_on_save(config)

    def validate_server_settings(self, settings: Any, path: str) -> list[str]:
        return validate_server_settings(settings, path)

    def secret_names(self, config: dict[str, Any], server_settings: Any = None) -> frozenset[str]:
        # What `secrets` holds at run time: the names the source writes literally.
        runtime = LANGUAGES.get(config.get("language", "python"))
        return runtime.referenced_secrets(config.get("source") or "") if runtime else frozenset()

    def compile(self, tool_def: dict[str, Any]) -> CodeTool:
        return compile(tool_def)

    async def call(
        self, compiled: CodeTool, arguments: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        return await call(compiled, arguments, ctx)


KIND = CodeKind()
