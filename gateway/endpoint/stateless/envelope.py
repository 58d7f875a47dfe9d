"""Is a request of the stateless era, and what its `_meta` envelope and routing headers say.

Checks run in the order the spec's error ladder gives them: the `_meta` envelope (-32602), the
routing headers against the body (-32020), the protocol version (-32022).
"""

import base64
import binascii
import re
from typing import Any

from mcp_protocol import errors, versions
from mcp_protocol.context import LOG_LEVELS
from mcp_protocol.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from mcp_protocol.jsonrpc import Request
from mcp_protocol.param_headers import HeaderParameters
from servers.snapshot import Snapshot

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


# Versions this path serves; the discover result also names the session-era ones (dual era).
MODERN_VERSIONS = (versions.STATELESS,)
# MRTR is allowed on these only; every other method must answer complete or fail.
MRTR_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# Methods whose Mcp-Name header must name a body parameter.
NAME_PARAMS = {
    **MRTR_METHODS,
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
HTTP_STATUS = {
    errors.METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    errors.MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}
BASE64_WORD = re.compile(r"^=\?base64\?(.*)\?=$", re.DOTALL)
# Visible ASCII, space and tab: what a literal (not base64-wrapped) header value may hold.
LITERAL_HEADER = re.compile(r"^[\x20-\x7e\t]*$")


def _meta_of(params: Any) -> dict[str, Any] | None:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else None


def is_modern(parsed: Any, session_id: str | None, header_version: str) -> bool:
    """A request with the modern `_meta` envelope (whatever version it names: the stateless
    path answers -32022 for one it does not serve), or any message but `initialize` without a
    session whose MCP-Protocol-Version header names 2026-07-28."""
    if isinstance(parsed, Request):
        meta = _meta_of(parsed.params)
        if meta is not None and META_VERSION in meta:
            return True
        if parsed.method == "initialize":
            # The handshake itself selects the session era, whatever the header says.
            return False
    if session_id:
        return False
    return header_version.strip() in MODERN_VERSIONS


def http_status(error: McpError) -> int:
    if error.http_status != 200:
        return error.http_status
    return HTTP_STATUS.get(error.code, 200)


def refusal(code: int, message: str, data: Any = None) -> McpError:
    return McpError(code, message, data, http_status=400)


# -- header checks --------------------------------------------------------------------------------


def decode_header_value(raw: str) -> str:
    """A header value as the client meant it: OWS trimmed, the =?base64?...?= form decoded.

    Raises ValueError for a malformed base64 word or a literal with characters HTTP forbids."""
    value = raw.strip(" \t")
    word = BASE64_WORD.match(value)
    if word is None:
        if not LITERAL_HEADER.match(value):
            raise ValueError("characters outside visible ASCII")
        return value
    try:
        return base64.b64decode(word.group(1), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise ValueError("malformed base64") from None


def _check_routing_headers(headers: dict[str, Any], request: Request) -> None:
    method_header = headers.get("mcp-method")
    if method_header is None:
        raise refusal(HEADER_MISMATCH, "Missing Mcp-Method header")
    if method_header.strip(" \t") != request.method:
        raise refusal(
            HEADER_MISMATCH,
            f"Mcp-Method header {method_header.strip()!r} does not match the body's method "
            f"{request.method!r}",
        )
    name_param = NAME_PARAMS.get(request.method)
    body_value = request.params.get(name_param) if name_param else None
    if body_value is None:
        return
    raw = headers.get("mcp-name")
    if raw is None:
        raise refusal(HEADER_MISMATCH, f"Missing Mcp-Name header (the body has {name_param})")
    try:
        value = decode_header_value(raw)
    except ValueError as exc:
        raise refusal(HEADER_MISMATCH, f"Malformed Mcp-Name header: {exc}") from None
    if value != body_value:
        raise refusal(
            HEADER_MISMATCH, f"Mcp-Name header does not match the body's params.{name_param}"
        )


def _render_argument(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    return None


def check_parameter_headers(
    parameters: HeaderParameters, arguments: dict[str, Any], headers: dict[str, Any]
) -> None:
    """Each `x-mcp-header` argument and its Mcp-Param-* header: both absent, or equal."""
    for name, header in parameters:
        raw = headers.get(header)
        value = arguments.get(name)
        if raw is None and value is None:
            continue
        if raw is None:
            raise refusal(HEADER_MISMATCH, f"Missing {header} header for argument {name!r}")
        if value is None:
            raise refusal(HEADER_MISMATCH, f"{header} header sent without argument {name!r}")
        try:
            decoded = decode_header_value(raw)
        except ValueError as exc:
            raise refusal(HEADER_MISMATCH, f"Malformed {header} header: {exc}") from None
        if decoded != _render_argument(value):
            raise refusal(HEADER_MISMATCH, f"{header} header does not match argument {name!r}")


# -- the envelope ---------------------------------------------------------------------------------


class Envelope:
    """What `_meta` says about the client of one request."""

    __slots__ = ("protocol_version", "capabilities", "client_info", "log_level", "progress_token")

    def __init__(self, meta: dict[str, Any]) -> None:
        self.protocol_version = meta[META_VERSION]
        self.capabilities = meta[META_CAPABILITIES]
        self.client_info = meta.get(META_CLIENT_INFO)
        self.log_level = meta.get(META_LOG_LEVEL)
        self.progress_token = meta.get("progressToken")


def read_envelope(request: Request, headers: dict[str, Any]) -> Envelope:
    meta = _meta_of(request.params)
    missing = [key for key in (META_VERSION, META_CAPABILITIES) if meta is None or key not in meta]
    if missing:
        raise refusal(INVALID_PARAMS, f"Missing params._meta fields: {', '.join(missing)}")
    assert meta is not None  # without _meta, both fields are missing
    header_version = headers.get("mcp-protocol-version")
    if header_version is None:
        raise refusal(HEADER_MISMATCH, "Missing MCP-Protocol-Version header")
    if header_version.strip(" \t") != meta[META_VERSION]:
        raise refusal(
            HEADER_MISMATCH,
            "MCP-Protocol-Version header does not match params._meta "
            f"{META_VERSION} ({meta[META_VERSION]!r})",
        )
    _check_routing_headers(headers, request)
    version = meta[META_VERSION]
    if version not in MODERN_VERSIONS:
        raise refusal(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version: {version}",
            {"supported": list(MODERN_VERSIONS), "requested": version},
        )
    if not isinstance(meta[META_CAPABILITIES], dict):
        raise refusal(INVALID_PARAMS, f"params._meta {META_CAPABILITIES} must be an object")
    client_info = meta.get(META_CLIENT_INFO)
    if client_info is not None and not isinstance(client_info, dict):
        raise refusal(INVALID_PARAMS, f"params._meta {META_CLIENT_INFO} must be an object")
    level = meta.get(META_LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        raise refusal(
            INVALID_PARAMS,
            f"params._meta {META_LOG_LEVEL} must be one of {', '.join(LOG_LEVELS)}",
        )
    return Envelope(meta)


def check_tool_headers(snapshot: Snapshot, request: Request, headers: Any) -> None:
    name = request.params.get("name")
    tool = snapshot.tools.get(name) if isinstance(name, str) else None
    arguments = request.params.get("arguments")
    if tool is not None and tool.header_parameters and isinstance(arguments, dict):
        check_parameter_headers(tool.header_parameters, arguments, headers)
