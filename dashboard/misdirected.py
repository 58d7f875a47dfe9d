"""An MCP client pointed at a dashboard page gets told where the MCP endpoint is.

People copy the address bar (`https://host/servers/weather/`) into a client's config. The page
answers a client's POST with an HTML CSRF refusal, which clients report as "Server returned an
error response" and nothing more. A request that is plainly an MCP client's (a JSON-RPC body,
or a GET that accepts only an event stream) gets a JSON-RPC error instead, naming the
`/mcp/<slug>` URL to use. Nothing is looked up: the slug is the one the caller typed, so the
answer says nothing about whether such a server exists.
"""

import re

import orjson
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse

from mcp_protocol import errors

# Where a JSON-RPC body is someone else's business (the API, OAuth, the admin).
OTHER_SURFACES = ("/api/", "/oauth/", "/admin/", "/.well-known/", "/mcp/", "/static/")
_SLUG_IN_PATH = re.compile(r"(?:^|/)servers/(?P<slug>[a-z0-9][a-z0-9-]{0,62})(?:/|$)")
MAX_PROBE_BYTES = 1_000_000


def is_mcp_request(request: HttpRequest) -> bool:
    accept = request.headers.get("accept", "")
    if request.method == "GET":
        # A browser accepts text/html; an MCP client's GET (its SSE stream) asks only for events.
        return "text/event-stream" in accept and "text/html" not in accept
    if request.method != "POST":
        return False
    if not request.content_type or "json" not in request.content_type:
        return False
    try:
        if int(request.headers.get("content-length") or 0) > MAX_PROBE_BYTES:
            return False
        body = orjson.loads(request.body)
    except (ValueError, orjson.JSONDecodeError, RequestDataTooBig):
        # Too big to be a client's handshake: the page's own answer (400) is left to Django.
        return False
    messages = body if isinstance(body, list) else [body]
    return bool(messages) and all(
        isinstance(m, dict) and m.get("jsonrpc") == "2.0" and "method" in m for m in messages
    )


def _request_id(request: HttpRequest):
    if request.method != "POST":
        return None
    try:
        body = orjson.loads(request.body)
    except (ValueError, orjson.JSONDecodeError):
        return None
    return body.get("id") if isinstance(body, dict) else None


def hint(request: HttpRequest) -> str:
    match = _SLUG_IN_PATH.search(request.path)
    if match:
        endpoint = request.build_absolute_uri(f"/mcp/{match['slug']}")
        return (
            f"{request.path} is a getmcp dashboard page, not an MCP endpoint: "
            f"point your MCP client at {endpoint}"
        )
    example = request.build_absolute_uri("/mcp/")
    return (
        f"{request.path} is a getmcp dashboard page, not an MCP endpoint: MCP servers are at "
        f"{example}<slug> (each server's Connect page shows its URL)"
    )


def misdirected_mcp(get_response):
    def middleware(request: HttpRequest) -> HttpResponse:
        if request.path.startswith(OTHER_SURFACES) or not is_mcp_request(request):
            return get_response(request)
        body = {
            "jsonrpc": "2.0",
            "id": _request_id(request),
            "error": {"code": errors.INVALID_REQUEST, "message": hint(request)},
        }
        return JsonResponse(body, status=404)

    return middleware
