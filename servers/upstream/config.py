"""Where an upstream MCP server is and how to reach it: the `url`, `transport`, `headers` and
`timeoutSeconds` fields that upstream tools, resources and prompts share, validated and compiled
here (the kinds add their own fields around them)."""

import re
from dataclasses import dataclass
from typing import Any

from ..templating import TemplateCompileError, compile_value

TRANSPORTS = ("streamable-http", "sse")
DEFAULT_TIMEOUT = 300.0
MAX_TIMEOUT = 3600.0
SECRET_REFERENCE = re.compile(r"secrets\s*(?:\.\s*([A-Za-z_]\w*)|\[\s*['\"]([A-Za-z_]\w*)['\"])")
HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")
# Set by the transport; a copy here could only break the session.
RESERVED_HEADERS = frozenset(
    {
        "host",
        "content-type",
        "content-length",
        "accept",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
        "connection",
        "transfer-encoding",
    }
)


def validate_fields_and_connection(config: dict, path: str, *, fields: frozenset[str]) -> list[str]:
    """A kind's config (a mapping) naming no field beyond `fields`, with a valid connection; the
    kind checks its own fields after these."""
    errors = [f"{path}.{key}: unknown field" for key in sorted(set(config) - fields)]
    return errors + validate_connection(config, path)


def validate_connection(config: dict, path: str = "config") -> list[str]:
    """The fields that say where an upstream is and how to reach it: url, transport, headers,
    timeoutSeconds (shared by upstream tools and upstream resources)."""
    errors = []
    url = config.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://[^/\s]+", url):
        errors.append(f"{path}.url: required, the upstream's http(s) MCP endpoint")
    elif "@" in url.split("/")[2]:
        errors.append(
            f"{path}.url: credentials in the URL are not allowed; use headers and secrets"
        )
    transport = config.get("transport", "streamable-http")
    if transport not in TRANSPORTS:
        errors.append(f"{path}.transport: must be one of {', '.join(TRANSPORTS)}")
    errors += _header_problems(config.get("headers", {}), f"{path}.headers")
    timeout = config.get("timeoutSeconds", DEFAULT_TIMEOUT)
    if (
        not isinstance(timeout, int | float)
        or isinstance(timeout, bool)
        or not 0 < timeout <= MAX_TIMEOUT
    ):
        errors.append(
            f"{path}.timeoutSeconds: must be a number of seconds, at most {MAX_TIMEOUT:g}"
        )
    return errors


def _header_problems(headers, path: str) -> list[str]:
    if not isinstance(headers, dict):
        return [f"{path}: must be a mapping of header -> value"]
    errors = []
    for name, value in headers.items():
        where = f"{path}.{name}"
        if not HEADER_NAME.match(str(name)):
            errors.append(f"{where}: not a valid header name")
        elif str(name).lower() in RESERVED_HEADERS:
            errors.append(f"{where}: set by the MCP transport itself")
        if not isinstance(value, str):
            errors.append(f"{where}: must be a string")
            continue
        try:
            compile_value(value)
        except TemplateCompileError as exc:
            errors.append(f"{where}: {exc}")
    return errors


@dataclass(frozen=True)
class UpstreamConnection:
    """What an upstream tool, resource or prompt carries compiled to reach its upstream: the
    fields compile_connection returns (servers.kinds.upstream.upstream_for opens it)."""

    url: str
    transport: str
    render_headers: Any
    secret_names: frozenset[str]
    timeout: float
    server_id: int | None
    organization_id: int | None


def compile_connection(
    config: dict, server: dict | None, *, default_timeout: float = DEFAULT_TIMEOUT
) -> dict:
    """The fields of UpstreamConnection, compiled, for a kind's constructor."""
    server = server or {}
    headers = config.get("headers") or {}
    text = " ".join(str(v) for v in headers.values())
    return {
        "url": config["url"],
        "transport": config.get("transport", "streamable-http"),
        "render_headers": compile_value(headers),
        "secret_names": frozenset(a or b for a, b in SECRET_REFERENCE.findall(text)),
        "timeout": float(config.get("timeoutSeconds", default_timeout)),
        "server_id": server.get("id"),
        "organization_id": server.get("organizationId"),
    }
