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
  connection: {provider: github, scopes: [repo]}  # act as the caller's connected account
                                                #  (docs/connected-accounts.md); `in: query`,
                                                #  `name`, `prefix` place the token elsewhere
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

The package, in the order a call meets it: config.py (fields and validation), compiling.py
(config -> HttpTool, once), request.py (HttpTool + arguments -> Outbound), auth.py (upstream
credentials), sending.py (SSRF guard, cache, retries), result.py (response -> CallToolResult),
step.py (the workflow `http` step).
"""

from .compiling import HttpTool, compile, compile_config
from .config import (
    DEFAULT_MAX_BYTES,
    PLACEHOLDER,
    referenced_secrets,
    validate_config,
    validate_server_settings,
)
from .result import call
from .sending import fetch
from .step import compile_step, run_step, validate_step

__all__ = [
    "DEFAULT_MAX_BYTES",
    "PLACEHOLDER",
    "HttpTool",
    "call",
    "compile",
    "compile_config",
    "compile_step",
    "fetch",
    "referenced_secrets",
    "run_step",
    "validate_config",
    "validate_server_settings",
    "validate_step",
]
