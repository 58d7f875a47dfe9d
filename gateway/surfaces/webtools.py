"""Webtools (seed 004): `GET /webtools/<slug>/[<version>]` metadata and `POST /webtools/<slug>/`.

Each tool is an action: `requestSchema` is its inputSchema, `responseSchema` the schema of `data`
(its outputSchema, or text/content blocks for a tool without one). Responses are the envelope
`{"status": "ok", "data": ...}` or `{"status": "error", "error": {"code", "message"}}`.
Servers define no configuration yet, so the configSchema accepts only an empty object.
"""

import logging

from jsonschema import Draft202012Validator

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import INVALID_PARAMS, InputRequired, McpError
from servers.methods import call_method

from .arguments import in_words, input_errors
from .results import plain_value, text_of, value_schema

log = logging.getLogger(__name__)

WEBTOOL_NOT_FOUND = "WEBTOOL_NOT_FOUND"
SCHEMA_ERROR = "SCHEMA_ERROR"
CONFIG_ERROR = "CONFIG_ERROR"
RATE_LIMIT = "RATE_LIMIT"
INTERNAL_ERROR = "INTERNAL_ERROR"
# A tool that ran and reported a failure meant for the caller (the spec allows custom codes).
TOOL_ERROR = "TOOL_ERROR"

HTTP_STATUS = {
    WEBTOOL_NOT_FOUND: 404,
    SCHEMA_ERROR: 400,
    CONFIG_ERROR: 400,
    RATE_LIMIT: 429,
    INTERNAL_ERROR: 500,
    TOOL_ERROR: 422,
}

CONFIG_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}
_config_validator = Draft202012Validator(CONFIG_SCHEMA)


def error(code: str, message: str) -> tuple[int, dict]:
    return HTTP_STATUS[code], {"status": "error", "error": {"code": code, "message": message}}


def ok(data) -> tuple[int, dict]:
    return 200, {"status": "ok", "data": data}


def not_found(slug: str, version: str | None = None) -> tuple[int, dict]:
    what = f"{slug}@{version}" if version else slug
    return error(WEBTOOL_NOT_FOUND, f"No webtool {what}")


def rate_limited(retry_after_seconds: int | None = None) -> tuple[int, dict]:
    suffix = f"; retry in {retry_after_seconds} s" if retry_after_seconds else ""
    return error(RATE_LIMIT, f"Too many requests{suffix}")


def metadata(snapshot) -> dict:
    description = snapshot.instructions or snapshot.server_info.get("title") or ""
    return {
        "name": snapshot.server_info["name"],
        "description": description,
        "version": snapshot.server_info["version"],
        "actions": [
            {
                "name": wire["name"],
                "description": wire.get("description", ""),
                "requestSchema": wire["inputSchema"],
                "responseSchema": value_schema(snapshot.tools[wire["name"]]),
            }
            for wire in snapshot.tool_list
        ],
        "configSchema": CONFIG_SCHEMA,
        "defaultConfig": {},
    }


def requested_version(body) -> str | None:
    """The version a POST body pins (the endpoint loads that snapshot), or None for the latest."""
    if isinstance(body, dict) and isinstance(body.get("version"), str) and body["version"]:
        return body["version"]
    return None


def _check_body(snapshot, body) -> tuple[int, dict] | None:
    """The error answer for a body that names no action of this snapshot, or sends a request
    its action does not take; None for a body to run."""
    if not isinstance(body, dict):
        return error(SCHEMA_ERROR, "The request body must be a JSON object")
    version = requested_version(body)
    if version is not None and version != snapshot.server_info["version"]:
        return not_found(snapshot.slug, version)
    if "sessionId" in body and not isinstance(body["sessionId"], str):
        return error(SCHEMA_ERROR, "sessionId: must be a string")
    action = body.get("action")
    if not isinstance(action, str) or not action:
        return error(SCHEMA_ERROR, "action: required, the name of one of the webtool's actions")
    tool = snapshot.tools.get(action)
    if tool is None:
        known = ", ".join(snapshot.tools) or "none"
        return error(SCHEMA_ERROR, f"action: unknown action {action!r} (actions: {known})")
    return _check_request(tool, body)


def _check_request(tool, body: dict) -> tuple[int, dict] | None:
    config = body.get("config", {})
    config_errors = sorted(_config_validator.iter_errors(config), key=lambda e: list(e.path))
    if config_errors:
        return error(CONFIG_ERROR, f"config: {config_errors[0].message}")
    if "request" not in body:
        return error(SCHEMA_ERROR, "request: required, an object matching the requestSchema")
    request = body["request"]
    if not isinstance(request, dict):
        return error(SCHEMA_ERROR, "request: must be an object")
    problems = input_errors(tool, request)
    if problems:
        return error(SCHEMA_ERROR, in_words(problems, "request"))
    return None


async def execute(snapshot, body, ctx: RequestContext) -> tuple[int, dict]:
    """Run `body.action` with `body.request` on this snapshot (already the requested version)."""
    refusal = _check_body(snapshot, body)
    if refusal is not None:
        return refusal
    action, request = body["action"], body["request"]
    tool = snapshot.tools[action]
    try:
        result = await call_method(
            snapshot, "tools/call", {"name": action, "arguments": request}, ctx
        )
    except InputRequired:
        return error(TOOL_ERROR, f"Action {action} needs answers from an MCP client")
    except McpError as exc:
        if exc.code == INVALID_PARAMS:
            return error(SCHEMA_ERROR, exc.message)
        log.warning("webtool %s/%s: JSON-RPC error %s", snapshot.slug, action, exc.code)
        return error(INTERNAL_ERROR, "Internal error")
    except Exception:
        log.exception("webtool %s/%s failed", snapshot.slug, action)
        return error(INTERNAL_ERROR, "Internal error")
    if result.get("isError"):
        return error(TOOL_ERROR, text_of(result) or f"Action {action} failed")
    return ok(plain_value(tool, result))
