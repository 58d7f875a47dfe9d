"""Compiling a tool's config once into an HttpTool: templates, parameters, forwarded headers."""

import asyncio
import hashlib
import weakref
from dataclasses import dataclass, field
from typing import Any

import jmespath
import jmespath.exceptions
import orjson

from mcp_protocol.schemas import BoundedValidator, validator_for

from ...templating import compile_value
from .config import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_BYTES,
    DEFAULT_TIMEOUT,
    PLACEHOLDER,
    QUERY_BY_DEFAULT,
    referenced_secrets,
)

# -- compilation ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Parameter:
    argument: str
    location: str
    name: str
    path: tuple[str, ...] = ()
    filename: str | None = None
    content_type: str | None = None


@dataclass(frozen=True, slots=True)
class Forward:
    source: str  # lower-case inbound name
    target: str
    prefix: str = ""


@dataclass(frozen=True)
class HttpTool:
    name: str
    server_id: int | None
    organization_id: int | None
    method: str
    url_parts: tuple[Any, ...]  # literal renderers and ("arg", name) placeholders, in order
    url_arguments: frozenset[str]
    parameters: tuple[Parameter, ...]
    default_location: str | None
    render_headers: Any
    render_query: Any
    render_body: Any
    has_body: bool
    body_type: str
    auth: dict[str, Any] | None
    render_auth: Any
    select: Any
    render_template: Any
    structured: bool
    output_validator: BoundedValidator | None
    max_bytes: int
    timeout: float
    retries: int
    backoff: float
    cache_ttl: int
    max_concurrency: int
    forwards: tuple[Forward, ...]
    follow_redirects: bool
    secret_names: frozenset[str]
    fingerprint: str
    # The caller's connected account the request acts as (connections.requirement.Requirement);
    # None for every tool that declares none, which then never looks one up.
    connection: Any = None
    _semaphores: Any = field(default_factory=weakref.WeakKeyDictionary, compare=False)

    def semaphore(self) -> asyncio.Semaphore:
        # One per event loop: a semaphore may not be shared between loops.
        loop = asyncio.get_running_loop()
        semaphore: asyncio.Semaphore | None = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
        return semaphore


def _url_parts(url: str) -> tuple[tuple[Any, ...], frozenset[str]]:
    parts: list[Any] = []
    names = set()
    position = 0
    for match in PLACEHOLDER.finditer(url):
        if match.start() > position:
            parts.append(("text", compile_value(url[position : match.start()])))
        parts.append(("arg", match.group(1)))
        names.add(match.group(1))
        position = match.end()
    if position < len(url):
        parts.append(("text", compile_value(url[position:])))
    return tuple(parts), frozenset(names)


def _parameters(config: dict[str, Any], url_arguments: frozenset[str]) -> tuple[Parameter, ...]:
    result = []
    for argument, spec in (config.get("parameters") or {}).items():
        if isinstance(spec, str):
            spec = {"in": spec}
        location = spec["in"]
        path = tuple(spec["path"].split(".")) if spec.get("path") else (spec.get("name", argument),)
        result.append(
            Parameter(
                argument=argument,
                location=location,
                name=spec.get("name", argument),
                path=path if location == "body" else (),
                filename=spec.get("filename"),
                content_type=spec.get("contentType"),
            )
        )
    mapped = {p.argument for p in result}
    result += [Parameter(a, "path", a) for a in sorted(url_arguments - mapped)]
    return tuple(result)


def _forwards(items: Any) -> tuple[Forward, ...]:
    forwards = []
    for item in items or ():
        if isinstance(item, str):
            forwards.append(Forward(item.lower(), item))
        else:
            forwards.append(
                Forward(item["from"].lower(), item.get("to", item["from"]), item.get("prefix", ""))
            )
    return tuple(forwards)


def _secret_names(*values: Any) -> frozenset[str]:
    return frozenset(referenced_secrets(list(values)))


def compile_config(
    config: dict[str, Any],
    *,
    name: str,
    server: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    send_unmapped: bool = True,
) -> HttpTool:
    """The compiled request of an http tool or workflow step; `server` is the `_server` entry."""
    server = server or {}
    defaults = server.get("http") or {}
    url = config["url"]
    if url.startswith("/") and defaults.get("baseUrl"):
        url = defaults["baseUrl"].rstrip("/") + url
    url_parts, url_arguments = _url_parts(url)
    method = config.get("method", "GET").upper()
    has_body = "body" in config
    if has_body or config.get("bodyType") or not send_unmapped:
        default_location = None
    else:
        default_location = "query" if method in QUERY_BY_DEFAULT else "body"
    auth = config.get("auth", defaults.get("auth"))
    if auth and auth.get("type") == "none":
        auth = None
    response = config.get("response") or {}
    headers = {**(defaults.get("headers") or {}), **(config.get("headers") or {})}
    structured = response.get("structured", output_schema is not None)
    fingerprint = hashlib.sha256(
        orjson.dumps([config, defaults, output_schema], option=orjson.OPT_SORT_KEYS)
    ).hexdigest()[:24]
    return HttpTool(
        name=name,
        server_id=server.get("id"),
        organization_id=server.get("organizationId"),
        method=method,
        url_parts=url_parts,
        url_arguments=url_arguments,
        parameters=_parameters(config, url_arguments),
        default_location=default_location,
        render_headers=compile_value(headers),
        render_query=compile_value(config.get("query") or {}),
        render_body=compile_value(config.get("body")),
        has_body=has_body,
        body_type=config.get("bodyType", "json"),
        auth=auth,
        render_auth=compile_value(auth or {}),
        select=jmespath.compile(response["select"]) if response.get("select") else None,
        render_template=compile_value(response["template"]) if "template" in response else None,
        structured=structured,
        output_validator=validator_for(output_schema) if output_schema else None,
        max_bytes=response.get("maxBytes", DEFAULT_MAX_BYTES),
        timeout=float(
            config.get("timeoutSeconds", defaults.get("timeoutSeconds", DEFAULT_TIMEOUT))
        ),
        retries=config.get("retries", 0),
        backoff=config.get("retryBackoffMs", 250) / 1000,
        cache_ttl=config.get("cacheTtlSeconds", 0),
        max_concurrency=config.get("maxConcurrency", DEFAULT_CONCURRENCY),
        forwards=_forwards(defaults.get("forwardHeaders"))
        + _forwards(config.get("forwardHeaders")),
        follow_redirects=config.get("followRedirects", True),
        secret_names=_secret_names(config, headers, auth),
        fingerprint=fingerprint,
        connection=_connection(config.get("connection")),
    )


def _connection(spec: Any) -> Any:
    if not spec:
        return None
    from connections.requirement import requirement_of

    return requirement_of(spec)


def compile(tool_def: dict[str, Any]) -> HttpTool:
    return compile_config(
        tool_def.get("config") or {},
        name=tool_def.get("name", ""),
        server=tool_def.get("_server"),
        output_schema=tool_def.get("outputSchema"),
    )
