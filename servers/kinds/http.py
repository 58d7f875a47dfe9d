"""`kind: http`: a tool that is one request to an existing HTTP API.

```yaml
kind: http
config:
  method: GET                                   # GET POST PUT PATCH DELETE HEAD OPTIONS
  url: "https://api.example.com/users/{id}"     # {name}: path placeholder (URL-encoded argument);
                                                #  a path starting with / joins the server's baseUrl
  parameters:                                   # where each argument goes (default below)
    id: path
    q: query                                    # short form: the location
    limit: {in: query, name: per_page}          # renamed upstream
    token: {in: header, name: X-Token}
    city: {in: body, path: address.city}        # nested JSON body field
    note: form                                  # urlencoded body field (bodyType: form)
    file: {in: multipart, filename: "a.txt", contentType: text/plain}   # a file part
  headers: {Accept: application/json}           # fixed headers (templates)
  query: {version: "2"}                         # fixed query parameters (templates)
  body: {kind: "user", tags: "{{ tags }}"}      # body template for the rest (JSON, or a string)
  bodyType: json                                # json | form | multipart | text
  auth: {type: bearer, token: "{{ secrets.API_TOKEN }}"}
  response:
    select: "data.items[0]"                     # JMESPath over a JSON body
    template: "{{ response.name }} ({{ status }})"   # text shown to the model
    structured: true                            # JSON -> structuredContent (default: when the
                                                #  tool has an outputSchema, checked against it)
    maxBytes: 1048576                           # larger bodies are cut, and the model is told
  timeoutSeconds: 30
  retries: 2                                    # 429 always; 5xx and network errors when idempotent
  retryBackoffMs: 250
  cacheTtlSeconds: 0                            # GET/HEAD 2xx responses cached in Redis
  maxConcurrency: 10                            # calls of this tool at once, per worker process
  forwardHeaders: [x-user-token, {from: x-gh-token, to: Authorization, prefix: "Bearer "}]
  followRedirects: true
```

Arguments nobody mapped go to the query string (GET, HEAD, DELETE, OPTIONS) or the JSON body
(POST, PUT, PATCH), unless the config has a `body` template, which then says what is sent.
Strings in url, headers, query, body and auth are jinja templates over the arguments and
`secrets` (the vault's values for the server; test values during a test run). Response
templates see `response`, `status`, `headers` and `args`, never secrets. A tool that sends
credentials (auth, secrets, forwarded headers) must have a fixed host (or one from a secret):
otherwise the model could choose where the credentials go. Every request goes through the SSRF
guard (servers.outbound) with the server's organization allow-list.

Auth (here or in the server's `http.auth`, the tool's wins; `{type: none}` turns it off):
`bearer {token}`, `apiKey {in: header|query, name, value}`, `basic {username, password}`,
`oauth2 {tokenUrl, clientId, clientSecret, scope?, audience?, clientAuth: body|basic}` (client
credentials; the token is cached in Redis, encrypted, until shortly before it expires, and
fetched again when the API answers 401).

The server's `http` settings (passed by the snapshot as `tool_def["_server"]["http"]`):
`baseUrl`, `auth`, `headers`, `forwardHeaders`, `timeoutSeconds`. Forwarded headers are the end
user's own credentials: sent upstream on that call only, never cached under their value, never
logged, masked in test runs.
"""

import asyncio
import base64
import contextlib
import hashlib
import random
import re
import time
import weakref
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote, urlencode

import jmespath
import jmespath.exceptions
import orjson

from mcp_protocol.errors import ToolError
from mcp_protocol.schemas import BoundedValidator, validator_for
from servers.outbound import BlockedDestination, GuardedResponse, OutboundError, guarded_request

from ..templating import TemplateCompileError, compile_value, render_text

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
QUERY_BY_DEFAULT = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})
LOCATIONS = ("path", "query", "header", "body", "form", "multipart")
BODY_TYPES = ("json", "form", "multipart", "text")
AUTH_FIELDS = {
    "none": ((), ()),
    "bearer": (("token",), ()),
    "apiKey": (("name", "value"), ("in",)),
    "basic": (("username",), ("password",)),
    "oauth2": (("tokenUrl", "clientId", "clientSecret"), ("scope", "audience", "clientAuth")),
}
# Inbound headers that authenticate the caller to getmcp itself or steer the transport.
UNFORWARDABLE = frozenset(
    {
        "authorization",
        "cookie",
        "host",
        "content-length",
        "content-type",
        "transfer-encoding",
        "connection",
        "x-api-key",
        "proxy-authorization",
    }
)
CONFIG_FIELDS = frozenset(
    {
        "method",
        "url",
        "parameters",
        "headers",
        "query",
        "body",
        "bodyType",
        "auth",
        "response",
        "timeoutSeconds",
        "retries",
        "retryBackoffMs",
        "cacheTtlSeconds",
        "maxConcurrency",
        "forwardHeaders",
        "followRedirects",
    }
)
SERVER_FIELDS = frozenset({"baseUrl", "auth", "headers", "forwardHeaders", "timeoutSeconds"})
RESPONSE_FIELDS = frozenset({"select", "template", "structured", "maxBytes"})

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 300.0
MAX_RETRIES = 5
MAX_RETRY_AFTER = 30.0
DEFAULT_MAX_BYTES = 1024 * 1024
MAX_MAX_BYTES = 20 * 1024 * 1024
DEFAULT_CONCURRENCY = 10
ERROR_EXCERPT = 500
OAUTH_EXPIRY_MARGIN = 30
PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")
# secrets.NAME or secrets["NAME"] (also as it looks inside JSON text, quotes escaped).
SECRET_REFERENCE = re.compile(
    r"\bsecrets\s*(?:\.\s*([A-Za-z_]\w*)|\[\s*\\?['\"]([A-Za-z_]\w*)\\?['\"])"
)


# -- validation -----------------------------------------------------------------------------------


def _positive_number(value, path: str, *, maximum=None, integer=False, zero=False) -> list[str]:
    kinds = int if integer else int | float
    if not isinstance(value, kinds) or isinstance(value, bool):
        return [f"{path}: must be a {'whole ' if integer else ''}number"]
    if value < 0 or (value == 0 and not zero):
        return [f"{path}: must be more than 0" if not zero else f"{path}: must be 0 or more"]
    if maximum is not None and value > maximum:
        return [f"{path}: must be at most {maximum}"]
    return []


def _templates(value, path: str) -> list[str]:
    try:
        compile_value(value)
    except TemplateCompileError as exc:
        return [f"{path}: {exc}"]
    return []


def _validate_auth(auth, path: str) -> list[str]:
    if not isinstance(auth, dict):
        return [f"{path}: must be a mapping with a type"]
    kind = auth.get("type")
    if kind not in AUTH_FIELDS:
        return [f"{path}.type: must be one of {', '.join(AUTH_FIELDS)}"]
    required, optional = AUTH_FIELDS[kind]
    errors = [f"{path}.{name}: required" for name in required if not auth.get(name)]
    unknown = set(auth) - {"type", *required, *optional}
    errors += [f"{path}.{name}: unknown field" for name in sorted(unknown)]
    if kind == "apiKey" and auth.get("in", "header") not in ("header", "query"):
        errors.append(f"{path}.in: must be header or query")
    if kind == "oauth2" and auth.get("clientAuth", "body") not in ("body", "basic"):
        errors.append(f"{path}.clientAuth: must be body or basic")
    return errors + _templates(auth, path)


def _validate_forward_headers(value, path: str) -> list[str]:
    if not isinstance(value, list):
        return [f"{path}: must be a list of header names"]
    errors = []
    for index, item in enumerate(value):
        where = f"{path}[{index}]"
        source = item.get("from") if isinstance(item, dict) else item
        if not isinstance(source, str) or not re.fullmatch(r"[A-Za-z0-9-]{1,100}", source):
            errors.append(f"{where}: must be a header name (or {{from, to, prefix}})")
            continue
        if source.lower() in UNFORWARDABLE or source.lower().startswith("mcp-"):
            errors.append(f"{where}: {source} cannot be forwarded (it authenticates to getmcp)")
        if isinstance(item, dict):
            unknown = set(item) - {"from", "to", "prefix"}
            errors += [f"{where}.{name}: unknown field" for name in sorted(unknown)]
            if "to" in item and not isinstance(item["to"], str):
                errors.append(f"{where}.to: must be a header name")
    return errors


def _validate_mapping(value, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: must be a mapping"]
    return _templates(value, path)


def _validate_parameters(parameters, path: str) -> list[str]:
    if not isinstance(parameters, dict):
        return [f"{path}: must be a mapping of argument -> location"]
    errors = []
    for name, spec in parameters.items():
        where = f"{path}.{name}"
        if isinstance(spec, str):
            spec = {"in": spec}
        if not isinstance(spec, dict):
            errors.append(f"{where}: must be a location ({', '.join(LOCATIONS)}) or a mapping")
            continue
        if spec.get("in") not in LOCATIONS:
            errors.append(f"{where}.in: must be one of {', '.join(LOCATIONS)}")
        unknown = set(spec) - {"in", "name", "path", "filename", "contentType"}
        errors += [f"{where}.{key}: unknown field" for key in sorted(unknown)]
        if "path" in spec and spec.get("in") != "body":
            errors.append(f"{where}.path: only for in: body")
        if ("filename" in spec or "contentType" in spec) and spec.get("in") != "multipart":
            errors.append(f"{where}.filename: only for in: multipart")
    return errors


_ORIGIN = re.compile(r"^(?:https?://)?((?:\{\{.*?\}\}|\{%.*?%\}|[^/?#])*)")
_EXPRESSION = re.compile(r"\{\{(.*?)\}\}|\{%")


def _origin_from_arguments(url: str) -> bool:
    """Whether the scheme-and-host part of a URL template depends on anything but secrets."""
    origin = _ORIGIN.match(url).group(1)
    if PLACEHOLDER.search(origin):
        return True
    for match in _EXPRESSION.finditer(origin):
        expression = match.group(1)
        if expression is None or not re.match(r"\s*secrets\s*[.\[]", expression):
            return True
    return False


def _sends_credentials(config: dict) -> bool:
    auth = config.get("auth")
    return bool(
        (isinstance(auth, dict) and auth.get("type") not in (None, "none"))
        or config.get("forwardHeaders")
        or referenced_secrets(config)
    )


def referenced_secrets(config) -> set[str]:
    """The secret names a config uses (for the dashboard to warn about missing ones)."""
    text = orjson.dumps(config).decode() if not isinstance(config, str) else config
    return {a or b for a, b in SECRET_REFERENCE.findall(text)}


def validate_server_settings(settings: dict, path: str = "http") -> list[str]:
    """Checks for a server's `http` settings (for the definition validator)."""
    if not isinstance(settings, dict):
        return [f"{path}: must be a mapping"]
    errors = [f"{path}.{key}: unknown field" for key in sorted(set(settings) - SERVER_FIELDS)]
    if "baseUrl" in settings and not (
        isinstance(settings["baseUrl"], str) and re.match(r"^https?://", settings["baseUrl"])
    ):
        errors.append(f"{path}.baseUrl: must be an http(s) URL")
    if "auth" in settings:
        errors += _validate_auth(settings["auth"], f"{path}.auth")
    if "headers" in settings:
        errors += _validate_mapping(settings["headers"], f"{path}.headers")
    if "forwardHeaders" in settings:
        errors += _validate_forward_headers(settings["forwardHeaders"], f"{path}.forwardHeaders")
    if "timeoutSeconds" in settings:
        errors += _positive_number(
            settings["timeoutSeconds"], f"{path}.timeoutSeconds", maximum=MAX_TIMEOUT
        )
    return errors


def validate_config(config: dict, path: str = "config", *, extra_fields=()) -> list[str]:
    if not isinstance(config, dict):
        return [f"{path}: must be a mapping"]
    errors = [
        f"{path}.{key}: unknown field"
        for key in sorted(set(config) - CONFIG_FIELDS - set(extra_fields))
    ]
    method = config.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in METHODS:
        errors.append(f"{path}.method: must be one of {', '.join(METHODS)}")
    url = config.get("url")
    if not isinstance(url, str) or not url:
        errors.append(f"{path}.url: required, an http(s) URL or a path under the server's baseUrl")
    elif not (re.match(r"^https?://", url) or url.startswith("/") or url.startswith("{{")):
        errors.append(f"{path}.url: must start with http://, https:// or /")
    else:
        errors += _templates(url, f"{path}.url")
        if _origin_from_arguments(url) and _sends_credentials(config):
            errors.append(
                f"{path}.url: the host cannot come from arguments in a tool that sends "
                "credentials (they could be sent anywhere); fix the host, or use a secret for it"
            )
    if "parameters" in config:
        errors += _validate_parameters(config["parameters"], f"{path}.parameters")
    for key in ("headers", "query"):
        if key in config:
            errors += _validate_mapping(config[key], f"{path}.{key}")
    body_type = config.get("bodyType", "json")
    if body_type not in BODY_TYPES:
        errors.append(f"{path}.bodyType: must be one of {', '.join(BODY_TYPES)}")
    if "body" in config:
        body = config["body"]
        if body_type in ("form", "multipart") and not isinstance(body, dict):
            errors.append(f"{path}.body: must be a mapping for bodyType {body_type}")
        if body_type == "text" and not isinstance(body, str):
            errors.append(f"{path}.body: must be a string for bodyType text")
        errors += _templates(body, f"{path}.body")
    if "auth" in config:
        errors += _validate_auth(config["auth"], f"{path}.auth")
    response = config.get("response", {})
    if not isinstance(response, dict):
        errors.append(f"{path}.response: must be a mapping")
    else:
        unknown = set(response) - RESPONSE_FIELDS
        errors += [f"{path}.response.{key}: unknown field" for key in sorted(unknown)]
        if "select" in response:
            try:
                jmespath.compile(response["select"])
            except (jmespath.exceptions.JMESPathError, TypeError, ValueError) as exc:
                errors.append(f"{path}.response.select: not a JMESPath expression ({exc})")
        if "template" in response:
            if not isinstance(response["template"], str):
                errors.append(f"{path}.response.template: must be a string")
            else:
                errors += _templates(response["template"], f"{path}.response.template")
                if SECRET_REFERENCE.search(response["template"]):
                    errors.append(f"{path}.response.template: secrets are not available here")
        if "structured" in response and not isinstance(response["structured"], bool):
            errors.append(f"{path}.response.structured: must be true or false")
        if "maxBytes" in response:
            errors += _positive_number(
                response["maxBytes"],
                f"{path}.response.maxBytes",
                maximum=MAX_MAX_BYTES,
                integer=True,
            )
    numbers = {
        "timeoutSeconds": {"maximum": MAX_TIMEOUT},
        "retries": {"maximum": MAX_RETRIES, "integer": True, "zero": True},
        "retryBackoffMs": {"maximum": 60_000, "zero": True},
        "cacheTtlSeconds": {"maximum": 7 * 24 * 3600, "integer": True, "zero": True},
        "maxConcurrency": {"maximum": 1000, "integer": True},
    }
    for key, limits in numbers.items():
        if key in config:
            errors += _positive_number(config[key], f"{path}.{key}", **limits)
    if "forwardHeaders" in config:
        errors += _validate_forward_headers(config["forwardHeaders"], f"{path}.forwardHeaders")
    if "followRedirects" in config and not isinstance(config["followRedirects"], bool):
        errors.append(f"{path}.followRedirects: must be true or false")
    return errors


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
    url_parts: tuple  # literal renderers and ("arg", name) placeholders, in order
    url_arguments: frozenset
    parameters: tuple[Parameter, ...]
    default_location: str | None
    render_headers: Any
    render_query: Any
    render_body: Any
    has_body: bool
    body_type: str
    auth: dict | None
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
    secret_names: frozenset
    fingerprint: str
    _semaphores: Any = field(default_factory=weakref.WeakKeyDictionary, compare=False)

    def semaphore(self) -> asyncio.Semaphore:
        # One per event loop: a semaphore may not be shared between loops.
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
        return semaphore


def _url_parts(url: str) -> tuple[tuple, frozenset]:
    parts: list = []
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


def _parameters(config: dict, url_arguments) -> tuple[Parameter, ...]:
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


def _forwards(items) -> tuple[Forward, ...]:
    forwards = []
    for item in items or ():
        if isinstance(item, str):
            forwards.append(Forward(item.lower(), item))
        else:
            forwards.append(
                Forward(item["from"].lower(), item.get("to", item["from"]), item.get("prefix", ""))
            )
    return tuple(forwards)


def _secret_names(*values) -> frozenset:
    return frozenset(referenced_secrets(list(values)))


def compile_config(
    config: dict,
    *,
    name: str,
    server: dict | None = None,
    output_schema=None,
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
    )


def compile(tool_def: dict) -> HttpTool:
    return compile_config(
        tool_def.get("config") or {},
        name=tool_def.get("name", ""),
        server=tool_def.get("_server"),
        output_schema=tool_def.get("outputSchema"),
    )


# -- building the request -------------------------------------------------------------------------


@dataclass
class Outbound:
    method: str
    url: str
    headers: dict = field(default_factory=dict)
    params: list = field(default_factory=list)
    json: Any = None
    data: dict | None = None
    files: dict | None = None
    content: bytes | None = None
    sensitive: list[str] = field(default_factory=list)  # values to mask besides the secrets

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
        return f"mcp:http:cache:{tool.server_id}:{tool.fingerprint}:{digest}"


def _set_path(target: dict, path: tuple[str, ...], value) -> None:
    for key in path[:-1]:
        node = target.get(key)
        if not isinstance(node, dict):
            node = target[key] = {}
        target = node
    target[path[-1]] = value


def _query_values(name: str, value) -> list[tuple[str, str]]:
    if isinstance(value, list | tuple):
        return [(name, _scalar(item)) for item in value if item is not None]
    return [(name, _scalar(value))]


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else render_text(value)


def _path_segment(value) -> str:
    """An argument as one path segment: slashes encoded, and `.`/`..` too, so an argument cannot
    climb to another endpoint of the API."""
    segment = quote(_scalar(value), safe="")
    return segment.replace(".", "%2E") if segment in (".", "..") else segment


def _stringify(mapping) -> dict:
    return {str(k): _scalar(v) for k, v in (mapping or {}).items() if v is not None}


def build_request(tool: HttpTool, arguments: dict, variables: dict) -> Outbound:
    url = ""
    for kind, part in tool.url_parts:
        if kind == "text":
            url += render_text(part(variables))
        else:
            if arguments.get(part) is None:
                raise ToolError(f"The argument {part!r} is required: it is part of the URL.")
            url += _path_segment(arguments[part])
    outbound = Outbound(method=tool.method, url=url)
    outbound.headers = _stringify(tool.render_headers(variables))
    for name, value in (tool.render_query(variables) or {}).items():
        if value is not None:
            outbound.params += _query_values(name, value)

    body = tool.render_body(variables) if tool.has_body else None
    if tool.body_type in ("form", "multipart") and body is None:
        body = {}
    json_fields: dict = {}
    form_fields: dict = {}
    files: dict = {}
    mapped = {p.argument for p in tool.parameters}
    for parameter in tool.parameters:
        if parameter.location == "path" or parameter.argument not in arguments:
            continue
        value = arguments[parameter.argument]
        if value is None:
            continue
        if parameter.location == "query":
            outbound.params += _query_values(parameter.name, value)
        elif parameter.location == "header":
            outbound.headers[parameter.name] = _scalar(value)
        elif parameter.location == "body":
            _set_path(json_fields, parameter.path, value)
        elif parameter.location == "form":
            form_fields[parameter.name] = _scalar(value)
        elif parameter.filename:
            raw = value.encode() if isinstance(value, str) else orjson.dumps(value)
            files[parameter.name] = (
                parameter.filename,
                raw,
                parameter.content_type or "application/octet-stream",
            )
        else:
            form_fields[parameter.name] = _scalar(value)
    if tool.default_location:
        for name, value in arguments.items():
            if name in mapped or value is None:
                continue
            if tool.default_location == "query":
                outbound.params += _query_values(name, value)
            else:
                json_fields[name] = value

    if tool.body_type == "json":
        if json_fields:
            body = _merge(body if isinstance(body, dict) else {}, json_fields)
        if body is not None and (tool.has_body or json_fields):
            outbound.json = body
    elif tool.body_type == "text":
        outbound.content = render_text(body if body is not None else "").encode()
        outbound.headers.setdefault("Content-Type", "text/plain; charset=utf-8")
    else:
        fields = {**_stringify(body if isinstance(body, dict) else {}), **form_fields}
        if tool.body_type == "form":
            outbound.data = fields
        else:
            # Fields as (None, value) parts: httpx2 writes multipart only when it has parts.
            outbound.files = {name: (None, value.encode(), None) for name, value in fields.items()}
            outbound.files.update(files)
    return outbound


def _merge(base: dict, extra: dict) -> dict:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def forward_client_headers(tool: HttpTool, outbound: Outbound, ctx) -> None:
    inbound = getattr(ctx, "client_headers", None) or {}
    for forward in tool.forwards:
        value = inbound.get(forward.source)
        if value:
            outbound.headers[forward.target] = forward.prefix + value
            outbound.sensitive.append(value)


# -- auth -----------------------------------------------------------------------------------------


async def apply_auth(
    tool: HttpTool, outbound: Outbound, variables: dict, *, test: bool, refresh: bool = False
) -> None:
    if not tool.auth:
        return
    auth = tool.render_auth(variables)
    kind = auth["type"]
    if kind == "bearer":
        token = _scalar(auth["token"])
        outbound.headers["Authorization"] = f"Bearer {token}"
        outbound.sensitive.append(token)
    elif kind == "apiKey":
        value = _scalar(auth["value"])
        if auth.get("in", "header") == "query":
            outbound.params.append((auth["name"], value))
        else:
            outbound.headers[auth["name"]] = value
        outbound.sensitive.append(value)
    elif kind == "basic":
        pair = f"{_scalar(auth['username'])}:{_scalar(auth.get('password', ''))}"
        encoded = base64.b64encode(pair.encode()).decode()
        outbound.headers["Authorization"] = f"Basic {encoded}"
        outbound.sensitive += [encoded, pair]
    elif kind == "oauth2":
        token = await oauth_token(tool, auth, test=test, refresh=refresh)
        outbound.headers["Authorization"] = f"Bearer {token}"
        outbound.sensitive.append(token)


def _oauth_cache_key(tool: HttpTool, auth: dict, test: bool) -> str:
    material = orjson.dumps(
        [
            tool.organization_id,
            auth["tokenUrl"],
            auth["clientId"],
            hashlib.sha256(_scalar(auth["clientSecret"]).encode()).hexdigest(),
            auth.get("scope"),
            auth.get("audience"),
            test,
        ]
    )
    return f"mcp:http:oauth:{hashlib.sha256(material).hexdigest()}"


async def oauth_token(tool: HttpTool, auth: dict, *, test: bool, refresh: bool = False) -> str:
    from infra.redis import async_client
    from vault import crypto

    redis = async_client()
    key = _oauth_cache_key(tool, auth, test)
    if not refresh:
        cached = await redis.get(key)
        if cached:
            try:
                return crypto.decrypt(cached.decode())
            except crypto.SecretUnreadable:
                pass
    client_id, client_secret = _scalar(auth["clientId"]), _scalar(auth["clientSecret"])
    form = {"grant_type": "client_credentials"}
    for name in ("scope", "audience"):
        if auth.get(name):
            form[name] = _scalar(auth[name])
    headers = {"Accept": "application/json"}
    if auth.get("clientAuth", "body") == "basic":
        pair = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
        headers["Authorization"] = f"Basic {pair}"
    else:
        form.update(client_id=client_id, client_secret=client_secret)
    try:
        response = await guarded_request(
            "POST",
            _scalar(auth["tokenUrl"]),
            organization_id=tool.organization_id,
            headers=headers,
            data=form,
            timeout=tool.timeout,
            max_bytes=64 * 1024,
        )
    except OutboundError as exc:
        raise ToolError(f"Could not get an OAuth token: {exc.message}") from None
    try:
        payload = response.json()
    except orjson.JSONDecodeError:
        payload = {}
    token = payload.get("access_token") if isinstance(payload, dict) else None
    if not isinstance(token, str) or not token:
        from vault.masking import Masker

        detail = payload.get("error") if isinstance(payload, dict) else None
        detail = f" ({detail[:100]})" if isinstance(detail, str) and detail else ""
        message = (
            f"The OAuth token endpoint answered {response.status_code} without an access token"
            f"{detail}: check the client credentials configured for this tool."
        )
        raise ToolError(Masker([client_id, client_secret]).mask(message))
    expires_in = payload.get("expires_in")
    ttl = int(expires_in) - OAUTH_EXPIRY_MARGIN if isinstance(expires_in, int | float) else 300
    if ttl > 0:
        await redis.set(key, crypto.encrypt(token), ex=ttl)
    return token


# -- running --------------------------------------------------------------------------------------


def _masker(secrets, outbound: Outbound):
    from vault.masking import Masker

    return Masker([*secrets.values(), *outbound.sensitive])


async def _secrets(tool: HttpTool, test: bool):
    from vault.resolve import SecretValues, asecrets_for

    if tool.organization_id is None or not tool.secret_names:
        # A config that names no secret cannot send one, so there is nothing to read or mask.
        values = SecretValues({})
    else:
        values = await asecrets_for(tool.organization_id, tool.server_id, test=test)
    missing = sorted(tool.secret_names - set(values))
    if missing:
        raise ToolError(
            f"The secret{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"{'are' if len(missing) > 1 else 'is'} not set for this server: add "
            f"{'them' if len(missing) > 1 else 'it'} in the vault."
        )
    return values


def _retry_after(response: GuardedResponse) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None


def _should_retry(tool: HttpTool, status: int | None) -> bool:
    if status == 429:
        return True
    idempotent = tool.method in IDEMPOTENT
    return idempotent and (status is None or status >= 500)


def _backoff(tool: HttpTool, attempt: int) -> float:
    # Exponential with jitter, so many callers that failed together do not return together.
    return tool.backoff * (2**attempt) * (0.5 + random.random() / 2)


class _Trace:
    """What a test run shows; a no-op unless the context asks for it (ctx.http_trace)."""

    def __init__(self, ctx):
        self.records = getattr(ctx, "http_trace", None)

    def add(self, record: dict) -> None:
        if self.records is not None:
            self.records.append(record)


def _request_dump(outbound: Outbound, response: GuardedResponse | None, masker) -> dict:
    url = outbound.url
    if outbound.params:
        url += ("&" if "?" in url else "?") + urlencode(outbound.params)
    headers = dict(response.request_headers) if response is not None else dict(outbound.headers)
    dump = {
        "method": outbound.method,
        "url": masker.mask(url),
        "headers": masker.mask_data(headers),
    }
    if outbound.json is not None:
        dump["json"] = masker.mask_data(outbound.json)
    if outbound.data:
        dump["form"] = masker.mask_data(outbound.data)
    if outbound.files:
        dump["multipart"] = {
            k: {"filename": v[0], "contentType": v[2], "size": len(v[1])}
            if v[0]
            else masker.mask(v[1].decode("utf-8", errors="replace"))
            for k, v in outbound.files.items()
        }
    if outbound.content is not None:
        dump["content"] = masker.mask(outbound.content.decode("utf-8", errors="replace")[:10_000])
    return dump


def _response_dump(response: GuardedResponse, masker, *, limit: int = 64 * 1024) -> dict:
    textual = _is_textual(response.content_type)
    body = (
        masker.mask(response.content[:limit].decode(response.encoding, errors="replace"))
        if textual
        else base64.b64encode(response.content[:limit]).decode()
    )
    return {
        "status": response.status_code,
        "reason": response.reason_phrase,
        "headers": masker.mask_data(dict(response.headers)),
        "body": body,
        "bodyEncoding": "text" if textual else "base64",
        "size": len(response.content),
        "truncated": response.truncated or len(response.content) > limit,
        "url": masker.mask(response.url),
        "redirects": [masker.mask(u) for u in response.redirects],
        "elapsedMs": round(response.elapsed_ms, 1),
    }


async def _send(tool: HttpTool, outbound: Outbound) -> GuardedResponse:
    return await guarded_request(
        outbound.method,
        outbound.url,
        organization_id=tool.organization_id,
        headers=outbound.headers,
        params=outbound.params or None,
        json=outbound.json,
        data=outbound.data,
        files=outbound.files or None,
        content=outbound.content,
        timeout=tool.timeout,
        max_bytes=tool.max_bytes,
        follow_redirects=tool.follow_redirects,
    )


def _to_cache(response: GuardedResponse, masker) -> bytes:
    # Nothing of the request is kept (its headers carry credentials); the URL is masked.
    return orjson.dumps(
        {
            "s": response.status_code,
            "r": response.reason_phrase,
            "h": list(response.headers.multi_items()),
            "b": base64.b64encode(response.content).decode(),
            "t": response.truncated,
            "u": masker.mask(response.url),
            "m": response.request_method,
        }
    )


def _from_cache(raw: bytes) -> GuardedResponse:
    import httpx2

    data = orjson.loads(raw)
    return GuardedResponse(
        status_code=data["s"],
        reason_phrase=data["r"],
        headers=httpx2.Headers(data["h"]),
        content=base64.b64decode(data["b"]),
        truncated=data["t"],
        url=data["u"],
        elapsed_ms=0.0,
        request_method=data["m"],
        request_headers=httpx2.Headers(),
    )


async def fetch(tool: HttpTool, arguments: dict, variables: dict, ctx):
    """Send the tool's request (auth, forwarding, cache, retries); returns (response, masker)."""
    test = bool(getattr(ctx, "use_test_secrets", False))
    secrets = await _secrets(tool, test)
    variables = {**variables, "secrets": secrets}
    outbound = build_request(tool, arguments, variables)
    forward_client_headers(tool, outbound, ctx)
    await apply_auth(tool, outbound, variables, test=test)
    masker = _masker(secrets, outbound)
    trace = _Trace(ctx)

    cache_key = None
    if tool.cache_ttl and tool.method in ("GET", "HEAD") and not test:
        from infra.redis import async_client

        cache_key = outbound.cache_key(tool)
        cached = await async_client().get(cache_key)
        if cached:
            response = _from_cache(cached)
            trace.add(
                {
                    "request": _request_dump(outbound, None, masker),
                    "cache": "hit",
                    "response": _response_dump(response, masker),
                }
            )
            return response, masker

    semaphore = tool.semaphore()
    try:
        await asyncio.wait_for(semaphore.acquire(), timeout=tool.timeout)
    except TimeoutError:
        raise ToolError(
            f"Too many calls of {tool.name} are running at once (at most {tool.max_concurrency});"
            " try again shortly."
        ) from None
    try:
        response, masker = await _send_with_retries(
            tool, outbound, variables, masker, trace, ctx, test
        )
    finally:
        semaphore.release()
    if cache_key and 200 <= response.status_code < 300:
        from infra.redis import async_client

        await async_client().set(cache_key, _to_cache(response, masker), ex=tool.cache_ttl)
    return response, masker


async def _send_with_retries(tool, outbound, variables, masker, trace, ctx, test):
    attempt = 0
    refreshed = False
    while True:
        started = time.perf_counter()
        try:
            response = await _send(tool, outbound)
        except BlockedDestination as exc:
            trace.add(
                {
                    "request": _request_dump(outbound, None, masker),
                    "attempt": attempt + 1,
                    "error": masker.mask(exc.message),
                }
            )
            raise ToolError(masker.mask(exc.message)) from None
        except OutboundError as exc:
            trace.add(
                {
                    "request": _request_dump(outbound, None, masker),
                    "attempt": attempt + 1,
                    "error": masker.mask(exc.message),
                    "elapsedMs": round((time.perf_counter() - started) * 1000, 1),
                }
            )
            if attempt < tool.retries and _should_retry(tool, None):
                await _pause(ctx, _backoff(tool, attempt))
                attempt += 1
                continue
            raise ToolError(
                f"The upstream API could not be reached: {masker.mask(exc.message)}"
            ) from None
        trace.add(
            {
                "request": _request_dump(outbound, response, masker),
                "attempt": attempt + 1,
                "cache": "miss" if tool.cache_ttl else "off",
                "connectedTo": [address for _host, address in response.connected_to],
                "response": _response_dump(response, masker),
            }
        )
        status = response.status_code
        if status == 401 and tool.auth and tool.auth.get("type") == "oauth2" and not refreshed:
            # The cached token may have been revoked before it expired: fetch a new one once.
            refreshed = True
            await apply_auth(tool, outbound, variables, test=test, refresh=True)
            masker = masker.add(*outbound.sensitive)
            continue
        if (
            attempt < tool.retries
            and (status == 429 or status >= 500)
            and _should_retry(tool, status)
        ):
            wait = _retry_after(response)
            if wait is None:
                wait = _backoff(tool, attempt)
            if wait <= MAX_RETRY_AFTER:
                await _pause(ctx, wait)
                attempt += 1
                continue
        return response, masker


async def _pause(ctx, seconds: float) -> None:
    sleep = getattr(ctx, "sleep", None)
    if sleep is None:
        await asyncio.sleep(seconds)
    else:
        await sleep(seconds)


# -- the response ---------------------------------------------------------------------------------

STATUS_HINTS = {
    400: "the API rejected the request; check the arguments",
    401: "the API did not accept the credentials configured for this tool",
    403: "the credentials configured for this tool are not allowed to do this",
    404: "the API found nothing at this address; check the arguments",
    405: "the API does not allow this method here",
    408: "the API timed out waiting for the request",
    409: "the request conflicts with the current state of the resource",
    413: "the request is too large for the API",
    422: "the API could not process the arguments",
    429: "the API is rate limiting requests; try again later",
}


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or content_type.endswith("+json")


def _is_textual(content_type: str) -> bool:
    return (
        not content_type
        or content_type.startswith("text/")
        or _is_json(content_type)
        or content_type.endswith("+xml")
        or content_type
        in (
            "application/xml",
            "application/javascript",
            "application/x-www-form-urlencoded",
            "application/yaml",
        )
    )


def upstream_error(response: GuardedResponse, masker) -> ToolError:
    status = response.status_code
    hint = STATUS_HINTS.get(status) or (
        "the API failed; try again later" if status >= 500 else "the API refused the request"
    )
    message = f"The upstream API answered {status} {response.reason_phrase}: {hint}."
    if response.content and _is_textual(response.content_type):
        excerpt = response.text.strip()
        if len(excerpt) > ERROR_EXCERPT:
            excerpt = excerpt[:ERROR_EXCERPT] + "…"
        message += f" Response: {excerpt}"
    return ToolError(masker.mask(message))


def _truncation_note(tool: HttpTool) -> str:
    return (
        f"\n\n[Truncated: the response was larger than {tool.max_bytes} bytes; only the first "
        f"{tool.max_bytes} bytes are shown.]"
    )


def build_result(tool: HttpTool, response: GuardedResponse, arguments: dict, masker) -> dict:
    """The CallToolResult for a response (raises ToolError for upstream errors)."""
    if response.status_code >= 400:
        raise upstream_error(response, masker)
    if 300 <= response.status_code < 400:
        raise ToolError(
            f"The upstream API answered {response.status_code} (a redirect that was not followed)."
        )
    content_type = response.content_type
    if tool.method == "HEAD" and tool.render_template is None:
        return {"content": [{"type": "text", "text": masker.mask(_head_summary(response))}]}
    if not _is_textual(content_type):
        return _binary_result(tool, response, content_type)
    text = response.text
    if response.truncated:
        return {"content": [{"type": "text", "text": masker.mask(text) + _truncation_note(tool)}]}
    data: Any = text
    parsed = False
    if _is_json(content_type) or (not content_type and text.lstrip()[:1] in ("{", "[")):
        try:
            data = orjson.loads(response.content) if response.content else None
            parsed = True
        except orjson.JSONDecodeError:
            if _is_json(content_type):
                raise ToolError("The upstream API sent invalid JSON.") from None
    if parsed and tool.select is not None:
        try:
            data = tool.select.search(data)
        except jmespath.exceptions.JMESPathError as exc:
            raise ToolError(f"The response selector failed: {exc}") from None
    result: dict = {}
    if tool.render_template is not None:
        rendered = tool.render_template(
            {
                "response": data,
                "status": response.status_code,
                "headers": {k.lower(): v for k, v in response.headers.items()},
                "args": arguments,
            }
        )
        text_out = render_text(rendered)
    elif parsed:
        text_out = "" if data is None else orjson.dumps(data).decode()
    else:
        text_out = text
    if not text_out and response.status_code == 204:
        text_out = "(no content: the upstream API answered 204)"
    result["content"] = [{"type": "text", "text": masker.mask(text_out)}]
    if tool.structured and parsed:
        structured = masker.mask_data(data if isinstance(data, dict) else {"result": data})
        if tool.output_validator is not None:
            error = next(iter(tool.output_validator.iter_errors(structured)), None)
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path) or "(root)"
                raise ToolError(
                    f"The upstream response does not match the tool's outputSchema at {where}: "
                    f"{error.message}"
                )
        result["structuredContent"] = structured
    return result


HEAD_HEADERS = ("content-type", "content-length", "last-modified", "etag", "cache-control")


def _head_summary(response: GuardedResponse) -> str:
    lines = [f"{response.status_code} {response.reason_phrase}"]
    lines += [
        f"{name}: {response.headers[name]}" for name in HEAD_HEADERS if name in response.headers
    ]
    return "\n".join(lines)


def _binary_result(tool: HttpTool, response: GuardedResponse, content_type: str) -> dict:
    if response.truncated:
        raise ToolError(
            f"The upstream API sent a {content_type or 'binary'} body larger than the "
            f"{tool.max_bytes}-byte limit of this tool."
        )
    data = base64.b64encode(response.content).decode()
    if content_type.startswith("image/"):
        return {"content": [{"type": "image", "data": data, "mimeType": content_type}]}
    if content_type.startswith("audio/"):
        return {"content": [{"type": "audio", "data": data, "mimeType": content_type}]}
    resource = {"uri": response.url, "blob": data}
    if content_type:
        resource["mimeType"] = content_type
    return {"content": [{"type": "resource", "resource": resource}]}


async def call(compiled: HttpTool, arguments: dict, ctx) -> dict:
    arguments = dict(arguments or {})
    response, masker = await fetch(compiled, arguments, arguments, ctx)
    return build_result(compiled, response, arguments, masker)


# -- the workflow `http` step ---------------------------------------------------------------------
#
#   - http: {method: GET, url: "https://api.example.com/items/{id}", response: {select: items},
#            into: found, failOnError: true}
#
# Later steps see `found.status`, `found.headers`, `found.body` (parsed JSON, or text),
# `found.data` (after the selector) and `found.text` (the response template's output, if any).

STEP_FIELDS = ("into", "failOnError")


def _validate_step(body: dict, path: str) -> list[str]:
    errors = validate_config(body, path, extra_fields=STEP_FIELDS)
    into = body.get("into")
    if into is not None and not (isinstance(into, str) and into.isidentifier()):
        errors.append(f"{path}.into: must be a variable name")
    if "failOnError" in body and not isinstance(body["failOnError"], bool):
        errors.append(f"{path}.failOnError: must be true or false")
    return errors


@dataclass(frozen=True, slots=True)
class StepRequest:
    tool: HttpTool
    fail_on_error: bool


def _compile_step(body: dict, tool_def: dict | None = None) -> StepRequest:
    config = {key: value for key, value in body.items() if key not in STEP_FIELDS}
    tool_def = tool_def or {}
    tool = compile_config(
        config,
        name=tool_def.get("name", "http step"),
        server=tool_def.get("_server"),
        send_unmapped=False,  # a workflow's variables are not all meant for the API
    )
    return StepRequest(tool, body.get("failOnError", True))


async def _run_step(step, variables: dict, ctx):
    request: StepRequest = step.extra
    tool = request.tool
    response, masker = await fetch(tool, variables, variables, ctx)
    if response.status_code >= 400 and request.fail_on_error:
        raise upstream_error(response, masker)
    body: Any = response.text if _is_textual(response.content_type) else None
    if _is_json(response.content_type) and not response.truncated:
        with contextlib.suppress(orjson.JSONDecodeError):
            body = orjson.loads(response.content) if response.content else None
    data = body
    if tool.select is not None and not isinstance(body, str):
        data = tool.select.search(body)
    value = {
        "status": response.status_code,
        "headers": {k.lower(): v for k, v in response.headers.items()},
        "body": masker.mask_data(body),
        "data": masker.mask_data(data),
        "truncated": response.truncated,
    }
    if tool.render_template is not None:
        rendered = tool.render_template(
            {
                "response": data,
                "status": response.status_code,
                "headers": value["headers"],
                "args": variables,
            }
        )
        value["text"] = masker.mask(render_text(rendered))
    variables[step.key] = value
    return None


def _register_step() -> None:
    from . import workflow

    register = getattr(workflow, "register_step", None)
    if register is not None:
        register("http", _validate_step, _run_step, _compile_step)


_register_step()
