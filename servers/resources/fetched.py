"""`kind: fetched`: a resource whose content is fetched from a URL on every read.

```yaml
resources:
  - uri: docs://changelog
    name: changelog
    mimeType: text/markdown        # optional: fixes the mimeType; otherwise the response's
    kind: fetched
    config:
      url: https://example.com/CHANGELOG.md
      headers: {Accept: text/markdown}              # templates over `secrets` only
      query: {ref: main}
      auth: {type: bearer, token: "{{ secrets.DOCS_TOKEN }}"}   # as the http tool kind
      maxBytes: 1048576           # a larger body is an error, never half a document
      cacheTtlSeconds: 300        # 2xx responses kept in Redis (0: fetched on every read)
      timeoutSeconds: 30
      retries: 0                  # 429, 5xx and network errors, with backoff
      retryBackoffMs: 250
      followRedirects: true
```

The request is the http tool kind's (servers.kinds.http) with method GET and no arguments: the
same SSRF guard and organization allow-list, the same auth schemes and secret rules (secrets are
put into the outbound request only, and masked out of every message and of text content), the
same Redis cache. A textual response becomes `text`, anything else `blob` (base64).
"""

import base64
import re
from dataclasses import dataclass

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import INTERNAL_ERROR, McpError, ToolError

from ..kinds import http
from ..templating import TemplateCompileError, compile_value

CONFIG_FIELDS = frozenset(
    {
        "url",
        "headers",
        "query",
        "auth",
        "maxBytes",
        "cacheTtlSeconds",
        "timeoutSeconds",
        "retries",
        "retryBackoffMs",
        "followRedirects",
    }
)
DEFAULT_MAX_BYTES = http.DEFAULT_MAX_BYTES
TEXT_TYPES = frozenset(
    {
        "application/javascript",
        "application/x-www-form-urlencoded",
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/sql",
        "application/graphql",
    }
)


def _http_config(config: dict) -> dict:
    """The http kind's config for this fetch: a GET that sends no arguments."""
    out = {key: value for key, value in config.items() if key != "maxBytes"}
    out["method"] = "GET"
    if "maxBytes" in config:
        out["response"] = {"maxBytes": config["maxBytes"]}
    return out


def validate_config(config: dict, path: str = "config") -> list[str]:
    if not isinstance(config, dict):
        return [f"{path}: must be a mapping"]
    errors = [f"{path}.{key}: unknown field" for key in sorted(set(config) - CONFIG_FIELDS)]
    url = config.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://[^/\s]", url):
        errors.append(f"{path}.url: required, an http:// or https:// URL")
    elif http.PLACEHOLDER.search(url):
        errors.append(
            f"{path}.url: a fetched resource has no arguments to fill {{placeholders}}; "
            "only {{ secrets.NAME }} templates"
        )
    else:
        try:
            compile_value(url)
        except TemplateCompileError as exc:
            errors.append(f"{path}.url: {exc}")
    if errors:
        return errors
    for message in http.validate_config(_http_config(config), path):
        errors.append(message.replace(f"{path}.response.maxBytes", f"{path}.maxBytes"))
    return errors


@dataclass(frozen=True)
class FetchedResource:
    uri: str
    mime_type: str | None
    request: http.HttpTool

    @property
    def max_bytes(self) -> int:
        return self.request.max_bytes


def compile(resource_def: dict) -> FetchedResource:
    server = resource_def.get("_server") or {}
    uri = resource_def["uri"]
    request = http.compile_config(
        _http_config(resource_def.get("config") or {}),
        name=uri,
        # The server's http defaults (baseUrl, auth) are for its tools; a fetched resource says
        # where it goes and what it sends itself.
        server={"id": server.get("id"), "organizationId": server.get("organizationId")},
        send_unmapped=False,
    )
    return FetchedResource(uri=uri, mime_type=resource_def.get("mimeType") or None, request=request)


def is_text(content_type: str) -> bool:
    return (
        content_type.startswith("text/")
        or content_type in TEXT_TYPES
        or content_type.endswith(("+json", "+xml", "+yaml"))
        or content_type == "application/json"
    )


def _failure(uri: str, reason: str) -> McpError:
    return McpError(INTERNAL_ERROR, f"Resource {uri} could not be fetched: {reason}", {"uri": uri})


async def read(compiled: FetchedResource, uri: str, ctx: RequestContext) -> list[dict]:
    try:
        response, masker = await http.fetch(compiled.request, {}, {}, ctx)
    except ToolError as exc:
        # http.fetch's messages are already masked, and name no secret.
        raise _failure(uri, exc.message) from None
    status = response.status_code
    if status >= 300:
        what = "a redirect that was not followed" if status < 400 else "not a success"
        raise _failure(uri, f"the URL answered {status} {response.reason_phrase} ({what}).")
    if response.truncated:
        raise _failure(
            uri, f"the response is larger than this resource's limit of {compiled.max_bytes} bytes."
        )
    content_type = response.content_type
    mime_type = compiled.mime_type or content_type or None
    deciding = content_type or (compiled.mime_type or "").lower()
    if deciding:
        textual = is_text(deciding)
    else:
        try:
            response.content.decode("utf-8")
            textual = True
        except UnicodeDecodeError:
            textual = False
    contents = {"uri": uri}
    if mime_type:
        contents["mimeType"] = mime_type
    if textual:
        contents["text"] = masker.mask(response.text)
    else:
        contents["blob"] = base64.b64encode(response.content).decode()
    return [contents]
