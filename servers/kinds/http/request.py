"""Building one request from an HttpTool and a call's arguments: URL, query, headers, body."""

import hashlib
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import orjson

from infra import keys
from mcp_protocol.context import RequestContext
from mcp_protocol.errors import ToolError

from ...templating import render_text
from .compiling import HttpTool, Parameter

# -- building the request -------------------------------------------------------------------------


@dataclass
class Outbound:
    method: str
    url: str
    headers: dict[str, Any] = field(default_factory=dict)
    params: list[Any] = field(default_factory=list)
    json: Any = None
    data: dict[str, Any] | None = None
    files: dict[str, Any] | None = None
    content: bytes | None = None
    sensitive: list[str] = field(default_factory=list)  # values to mask besides the secrets
    connection_token: str = ""  # the caller's connected-account token this request carries

    def cache_key(self, tool: HttpTool) -> str:
        files = {
            k: [v[0], hashlib.sha256(v[1]).hexdigest(), v[2]] for k, v in (self.files or {}).items()
        }  # parts are (filename or None, bytes, content type or None)
        material = orjson.dumps(
            [
                self.method,
                self.url,
                sorted(self.headers.items()),
                self.params,
                self.json,
                self.data,
                files,
                self.content.hex() if self.content else None,
            ],
            option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
            default=str,
        )
        digest = hashlib.sha256(material).hexdigest()
        return keys.http_response_cache(tool.server_id, tool.fingerprint, digest)


def _set_path(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        node = target.get(key)
        if not isinstance(node, dict):
            node = target[key] = {}
        target = node
    target[path[-1]] = value


def _query_values(name: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, list | tuple):
        return [(name, _scalar(item)) for item in value if item is not None]
    return [(name, _scalar(value))]


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else render_text(value)


def _path_segment(value: Any) -> str:
    """An argument as one path segment: slashes encoded, and `.`/`..` too, so an argument cannot
    climb to another endpoint of the API."""
    segment = quote(_scalar(value), safe="")
    return segment.replace(".", "%2E") if segment in (".", "..") else segment


def _stringify(mapping: dict[str, Any] | None) -> dict[str, Any]:
    return {str(k): _scalar(v) for k, v in (mapping or {}).items() if v is not None}


@dataclass
class _Fields:
    """Arguments placed in the body, before the body type decides how they are sent."""

    json: dict[str, Any] = field(default_factory=dict)
    form: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Any] = field(default_factory=dict)


def build_request(tool: HttpTool, arguments: dict[str, Any], variables: dict[str, Any]) -> Outbound:
    outbound = Outbound(method=tool.method, url=_render_url(tool, arguments, variables))
    outbound.headers = _stringify(tool.render_headers(variables))
    for name, value in (tool.render_query(variables) or {}).items():
        if value is not None:
            outbound.params += _query_values(name, value)
    body = tool.render_body(variables) if tool.has_body else None
    if tool.body_type in ("form", "multipart") and body is None:
        body = {}
    fields = _Fields()
    for parameter in tool.parameters:
        if parameter.location == "path" or parameter.argument not in arguments:
            continue
        value = arguments[parameter.argument]
        if value is not None:
            _place(parameter, value, outbound, fields)
    if tool.default_location:
        _place_unmapped(tool, arguments, outbound, fields)
    _attach_body(tool, outbound, body, fields)
    return outbound


def _render_url(tool: HttpTool, arguments: dict[str, Any], variables: dict[str, Any]) -> str:
    url = ""
    for kind, part in tool.url_parts:
        if kind == "text":
            url += render_text(part(variables))
        else:
            if arguments.get(part) is None:
                raise ToolError(f"The argument {part!r} is required: it is part of the URL.")
            url += _path_segment(arguments[part])
    return url


def _place(parameter: Parameter, value: Any, outbound: Outbound, fields: _Fields) -> None:
    """One mapped argument where its parameter says (path parameters are in the URL)."""
    if parameter.location == "query":
        outbound.params += _query_values(parameter.name, value)
    elif parameter.location == "header":
        outbound.headers[parameter.name] = _scalar(value)
    elif parameter.location == "body":
        _set_path(fields.json, parameter.path, value)
    elif parameter.location == "form":
        fields.form[parameter.name] = _scalar(value)
    elif parameter.filename:
        raw = value.encode() if isinstance(value, str) else orjson.dumps(value)
        fields.files[parameter.name] = (
            parameter.filename,
            raw,
            parameter.content_type or "application/octet-stream",
        )
    else:
        fields.form[parameter.name] = _scalar(value)


def _place_unmapped(
    tool: HttpTool, arguments: dict[str, Any], outbound: Outbound, fields: _Fields
) -> None:
    """Arguments no parameter names go to the tool's default location (query or JSON body)."""
    mapped = {p.argument for p in tool.parameters}
    for name, value in arguments.items():
        if name in mapped or value is None:
            continue
        if tool.default_location == "query":
            outbound.params += _query_values(name, value)
        else:
            fields.json[name] = value


def _attach_body(tool: HttpTool, outbound: Outbound, body: Any, fields: _Fields) -> None:
    if tool.body_type == "json":
        if fields.json:
            body = _merge(body if isinstance(body, dict) else {}, fields.json)
        if body is not None and (tool.has_body or fields.json):
            outbound.json = body
    elif tool.body_type == "text":
        outbound.content = render_text(body if body is not None else "").encode()
        outbound.headers.setdefault("Content-Type", "text/plain; charset=utf-8")
    else:
        form = {**_stringify(body if isinstance(body, dict) else {}), **fields.form}
        if tool.body_type == "form":
            outbound.data = form
        else:
            # Fields as (None, value) parts: httpx2 writes multipart only when it has parts.
            outbound.files = {name: (None, value.encode(), None) for name, value in form.items()}
            outbound.files.update(fields.files)


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def forward_client_headers(tool: HttpTool, outbound: Outbound, ctx: RequestContext) -> None:
    inbound = ctx.client_headers
    for forward in tool.forwards:
        value = inbound.get(forward.source)
        if value:
            outbound.headers[forward.target] = forward.prefix + value
            outbound.sensitive.append(value)
