"""The http kind's config and the server's `http` settings: their fields, limits and validation."""

import re
from collections.abc import Iterable
from typing import Any

import jmespath
import jmespath.exceptions
import orjson

from ...templating import TemplateCompileError, compile_value

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
        "connection",
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


def _positive_number(
    value: Any,
    path: str,
    *,
    maximum: int | float | None = None,
    integer: bool = False,
    zero: bool = False,
) -> list[str]:
    kinds = int if integer else int | float
    if not isinstance(value, kinds) or isinstance(value, bool):
        return [f"{path}: must be a {'whole ' if integer else ''}number"]
    if value < 0 or (value == 0 and not zero):
        return [f"{path}: must be more than 0" if not zero else f"{path}: must be 0 or more"]
    if maximum is not None and value > maximum:
        return [f"{path}: must be at most {maximum}"]
    return []


def _templates(value: Any, path: str) -> list[str]:
    try:
        compile_value(value)
    except TemplateCompileError as exc:
        return [f"{path}: {exc}"]
    return []


def _validate_auth(auth: Any, path: str) -> list[str]:
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


def _validate_forward_headers(value: Any, path: str) -> list[str]:
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


def _validate_mapping(value: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: must be a mapping"]
    return _templates(value, path)


def _validate_parameters(parameters: Any, path: str) -> list[str]:
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
    matched = _ORIGIN.match(url)
    origin = matched.group(1) if matched else ""  # the pattern matches every string
    if PLACEHOLDER.search(origin):
        return True
    for match in _EXPRESSION.finditer(origin):
        expression = match.group(1)
        if expression is None or not re.match(r"\s*secrets\s*[.\[]", expression):
            return True
    return False


def _sends_credentials(config: dict[str, Any]) -> bool:
    auth = config.get("auth")
    return bool(
        (isinstance(auth, dict) and auth.get("type") not in (None, "none"))
        or config.get("forwardHeaders")
        or config.get("connection")
        or referenced_secrets(config)
    )


def referenced_secrets(config: Any) -> set[str]:
    """The secret names a config uses (for the dashboard to warn about missing ones)."""
    text = orjson.dumps(config).decode() if not isinstance(config, str) else config
    return {a or b for a, b in SECRET_REFERENCE.findall(text)}


def validate_server_settings(settings: dict[str, Any], path: str = "http") -> list[str]:
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


# Limits of the numeric fields: `_positive_number` keyword arguments.
NUMBER_LIMITS: dict[str, dict[str, Any]] = {
    "timeoutSeconds": {"maximum": MAX_TIMEOUT},
    "retries": {"maximum": MAX_RETRIES, "integer": True, "zero": True},
    "retryBackoffMs": {"maximum": 60_000, "zero": True},
    "cacheTtlSeconds": {"maximum": 7 * 24 * 3600, "integer": True, "zero": True},
    "maxConcurrency": {"maximum": 1000, "integer": True},
}


def validate_config(
    config: dict[str, Any], path: str = "config", *, extra_fields: Iterable[str] = ()
) -> list[str]:
    if not isinstance(config, dict):
        return [f"{path}: must be a mapping"]
    errors = [
        f"{path}.{key}: unknown field"
        for key in sorted(set(config) - CONFIG_FIELDS - set(extra_fields))
    ]
    method = config.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in METHODS:
        errors.append(f"{path}.method: must be one of {', '.join(METHODS)}")
    errors += _validate_url(config, path)
    if "parameters" in config:
        errors += _validate_parameters(config["parameters"], f"{path}.parameters")
    for key in ("headers", "query"):
        if key in config:
            errors += _validate_mapping(config[key], f"{path}.{key}")
    errors += _validate_body(config, path)
    if "auth" in config:
        errors += _validate_auth(config["auth"], f"{path}.auth")
    errors += _validate_response(config.get("response", {}), f"{path}.response")
    for key, limits in NUMBER_LIMITS.items():
        if key in config:
            errors += _positive_number(config[key], f"{path}.{key}", **limits)
    if "forwardHeaders" in config:
        errors += _validate_forward_headers(config["forwardHeaders"], f"{path}.forwardHeaders")
    if "followRedirects" in config and not isinstance(config["followRedirects"], bool):
        errors.append(f"{path}.followRedirects: must be true or false")
    if "connection" in config:
        errors += validate_connection(config["connection"], f"{path}.connection")
    return errors


def validate_connection(connection: Any, path: str) -> list[str]:
    """`connection: {provider, scopes?, in?: header|query, name?, prefix?}`: the caller's
    connected account the request acts as (connections/)."""
    from connections.requirement import validate

    return validate(connection, path)


def _validate_url(config: dict[str, Any], path: str) -> list[str]:
    url = config.get("url")
    if not isinstance(url, str) or not url:
        return [f"{path}.url: required, an http(s) URL or a path under the server's baseUrl"]
    if not (re.match(r"^https?://", url) or url.startswith("/") or url.startswith("{{")):
        return [f"{path}.url: must start with http://, https:// or /"]
    errors = _templates(url, f"{path}.url")
    if _origin_from_arguments(url) and _sends_credentials(config):
        errors.append(
            f"{path}.url: the host cannot come from arguments in a tool that sends "
            "credentials (they could be sent anywhere); fix the host, or use a secret for it"
        )
    return errors


def _validate_body(config: dict[str, Any], path: str) -> list[str]:
    errors = []
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
    return errors


def _validate_response(response: Any, path: str) -> list[str]:
    if not isinstance(response, dict):
        return [f"{path}: must be a mapping"]
    errors = [f"{path}.{key}: unknown field" for key in sorted(set(response) - RESPONSE_FIELDS)]
    if "select" in response:
        try:
            jmespath.compile(response["select"])
        except (jmespath.exceptions.JMESPathError, TypeError, ValueError) as exc:
            errors.append(f"{path}.select: not a JMESPath expression ({exc})")
    if "template" in response:
        errors += _validate_response_template(response["template"], f"{path}.template")
    if "structured" in response and not isinstance(response["structured"], bool):
        errors.append(f"{path}.structured: must be true or false")
    if "maxBytes" in response:
        errors += _positive_number(
            response["maxBytes"], f"{path}.maxBytes", maximum=MAX_MAX_BYTES, integer=True
        )
    return errors


def _validate_response_template(template: Any, path: str) -> list[str]:
    if not isinstance(template, str):
        return [f"{path}: must be a string"]
    errors = _templates(template, path)
    if SECRET_REFERENCE.search(template):
        errors.append(f"{path}: secrets are not available here")
    return errors
