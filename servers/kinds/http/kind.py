"""The http kind's contract (servers/kinds/contract.py)."""

from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

from mcp_protocol.context import RequestContext

from ..contract import TemplateScope, ToolKind
from .compiling import HttpTool, compile
from .config import referenced_secrets, validate_config, validate_server_settings
from .result import call


class HttpKind(ToolKind):
    name = "http"
    label = "HTTP"
    # Answered on an event stream when the client accepts one, as every kind but static always
    # was (the call itself sends no notifications today).
    streams_progress = True
    reads_secrets = True
    has_destinations = True
    needs_connection = True  # config.connection: the caller's connected account (connections/)
    server_settings = "http"  # baseUrl, auth, headers, forwardHeaders, timeoutSeconds
    template_scope = TemplateScope.REQUEST
    config_example = MappingProxyType(
        {
            "method": "GET",
            "url": "https://api.example.com/search",
            "parameters": {"message": {"in": "query", "name": "q"}},
            "response": {"select": "results[0]"},
            "timeoutSeconds": 30,
        }
    )

    def validate_config(self, config: dict[str, Any]) -> list[str]:
        return validate_config(config)

    def validate_server_settings(self, settings: Any, path: str) -> list[str]:
        return validate_server_settings(settings, path)

    def secret_names(self, config: dict[str, Any], server_settings: Any = None) -> frozenset[str]:
        # The server's auth and headers go with every call of every http tool.
        return frozenset(referenced_secrets([config, server_settings or {}]))

    def destinations(self, config: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        yield "config.url", config.get("url")

    def compile(self, tool_def: dict[str, Any]) -> HttpTool:
        return compile(tool_def)

    async def call(
        self, compiled: HttpTool, arguments: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        return await call(compiled, arguments, ctx)


KIND = HttpKind()
