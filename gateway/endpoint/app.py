"""The ASGI entry of the hot path: /mcp/... is served here, everything else goes to Django."""

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

from django.conf import settings

from activity import recorder
from infra.redis import is_embedded
from inspector import publish as inspector
from mcp_protocol import errors
from observability.asgi import observed
from servers.outages import RETRY_AFTER_SECONDS, outage_message, outage_of
from servers.slugs import SLUG_PATTERN

from ..pipeline.arrival import Surface
from ..surfaces import webtools
from . import entrance, legacy_sse, streamable, surfaces
from .gate import CORS_ALLOW_HEADERS, Gate, Refused
from .http import (
    BodyTimeout,
    HttpRequest,
    Receive,
    Scope,
    Send,
    respond,
    respond_json,
    rpc_error,
)

log = logging.getLogger(__name__)

# A response's headers, as respond_json takes them.
Headers = list[tuple[str, str]]
# What the rest of the site goes to: Django's ASGIHandler (whose send takes any Mapping).
ASGIApp = Callable[..., Awaitable[None]]
# A handler of one path under /mcp/<slug> (ROUTES), and of a surface's document (get_only).
Route = Callable[["McpApp", Gate, HttpRequest, Send], Awaitable[None]]
Document = Callable[[Gate, Send], Awaitable[None]]

MCP_PATH = re.compile(
    rf"^/mcp/(?P<slug>{SLUG_PATTERN})(?:@(?P<version>\d+\.\d+\.\d+))?(?P<rest>/.*)?$"
)
WEBTOOLS_PATH = re.compile(rf"^/webtools/(?P<slug>{SLUG_PATTERN})/(?P<version>[^/]+)?$")
TOOL_REST = "/tools/"
# What a REST or Webtools call asks, known before its body is read (its scope is checked then).
CALLS = ("tools/call",)
# Protected resource metadata appended to the server's path (clients that do not insert it):
# served by Django (oauth/urls.py) like the path-inserted form.
OAUTH_METADATA_REST = "/.well-known/oauth-protected-resource"
WEBTOOL_CODES = {
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "WEBTOOL_NOT_FOUND",
    429: "RATE_LIMIT",
}


def bounded_body(receive: Receive, timeout: float) -> Receive:
    """`receive` for Django: the request body must arrive within `timeout` seconds, else Django
    is told the client went away (it drops the request, uvicorn closes the connection). Later
    receives (waiting for a disconnect) are not bounded."""
    deadline: float | None = None
    done = False

    async def bounded() -> dict[str, Any]:
        nonlocal deadline, done
        if done:
            return await receive()
        loop = asyncio.get_running_loop()
        if deadline is None:
            deadline = loop.time() + timeout
        try:
            message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0))
        except TimeoutError:
            done = True
            return {"type": "http.disconnect"}
        if message["type"] != "http.request" or not message.get("more_body"):
            done = True
        return message

    return bounded


class McpApp:
    def __init__(self, fallback: ASGIApp) -> None:
        self.fallback = fallback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        if scope["type"] == "http" and scope["path"].startswith("/mcp/"):
            await observed(self.mcp, scope, receive, send, "mcp")
            return
        if scope["type"] == "http" and scope["path"].startswith("/webtools/"):
            await observed(self.webtools, scope, receive, send, "webtools")
            return
        if scope["type"] == "http":
            receive = bounded_body(receive, settings.HTTP_BODY_TIMEOUT_SECONDS)
        await self.fallback(scope, receive, send)

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                from getmcp import embedded_beat, gc_policy

                embedded_beat.start()
                # Last: what start-up built is frozen out of every later collection.
                gc_policy.apply()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def shutdown(self) -> None:
        """An orderly stop (SIGTERM) loses no call-log row: the buffer goes to Redis first.
        In embedded mode that "Redis" lives in this process, so its rows are stored now."""
        timeout = settings.CALL_LOG_SHUTDOWN_FLUSH_SECONDS
        await asyncio.to_thread(recorder.flush_before_exit, timeout)
        if is_embedded():
            await asyncio.to_thread(_store_call_log_now)

    async def mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = MCP_PATH.match(scope["path"])
        rest = (match["rest"] or "/") if match else None
        route: Route | None = ROUTES.get(rest) if rest is not None else None
        if rest and rest.startswith(TOOL_REST) and len(rest) > len(TOOL_REST):
            route = McpApp.rest_tool
        if route is None:
            if rest == OAUTH_METADATA_REST:
                await self.fallback(scope, receive, send)
                return
            await respond_json(send, 404, {"error": "Not found"})
            return
        assert match is not None and rest is not None  # a route was found for the path's rest
        req = HttpRequest(scope, receive)
        gate = Gate(req, match["slug"], match["version"], SURFACES.get(rest, "rest"))
        capture = inspector.Capture()
        # Keeps the answer only while watched, and notes whether a response started.
        send = capture.wrap(send, gate, rest)
        refusal: Refused | None = None
        try:
            await route(self, gate, req, send)
        except Refused as refused:
            refusal = refused
            cors = gate.cors_headers() if gate.origin_ok else []
            await respond_json(send, refused.status, refused.body(), [*refused.headers, *cors])
        except BodyTimeout:
            if not capture.responded:
                await respond_json(
                    send,
                    408,
                    rpc_error(errors.INVALID_REQUEST, "Request body not received in time"),
                )
        except Exception as exc:
            status, message, headers = failure(req, exc)
            if not capture.responded:
                await respond_json(send, status, rpc_error(errors.INTERNAL_ERROR, message), headers)
        finally:
            inspector.finished(gate, capture, rest, refusal)

    async def legacy_stream(self, gate: Gate, req: HttpRequest, send: Send) -> None:
        if req.method != "GET":
            await respond(send, 405, headers=[("allow", "GET")])
            return
        await gate.admit()
        await legacy_sse.handle_stream(gate, send)

    async def legacy_message(self, gate: Gate, req: HttpRequest, send: Send) -> None:
        if req.method != "POST":
            await respond(send, 405, headers=[("allow", "POST")])
            return
        session_ids = req.query.get("session_id")
        gate.session_id = session_ids[0] if session_ids else None
        await gate.admit()
        await legacy_sse.handle_message(gate, send)

    async def rest_tool(self, gate: Gate, req: HttpRequest, send: Send) -> None:
        if req.method != "POST":
            await respond(send, 405, headers=[("allow", "POST")])
            return
        await gate.admit(methods=CALLS)
        await surfaces.call_tool(gate, send, unquote(req.path.split(TOOL_REST, 1)[1]))

    async def openapi(self, gate: Gate, req: HttpRequest, send: Send) -> None:
        await self.get_only(gate, req, send, surfaces.openapi_document)

    async def discovery(self, gate: Gate, req: HttpRequest, send: Send) -> None:
        await self.get_only(gate, req, send, surfaces.discovery_document)

    async def get_only(self, gate: Gate, req: HttpRequest, send: Send, handler: Document) -> None:
        if req.method != "GET":
            await respond(send, 405, headers=[("allow", "GET")])
            return
        await gate.admit()
        await handler(gate, send)

    async def webtools(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = WEBTOOLS_PATH.match(scope["path"])
        if not match:
            await respond_json(
                send,
                404,
                {
                    "status": "error",
                    "error": {"code": "WEBTOOL_NOT_FOUND", "message": "No webtool at this path"},
                },
            )
            return
        req = HttpRequest(scope, receive)
        gate: Gate | None = None
        try:
            posted = None
            version = match["version"]
            if req.method == "POST" and version is None:
                # The body is read before admission: the version it pins is the one admitted.
                posted = await surfaces.webtools_posted(req)
                version = posted.pinned
            gate = Gate(req, match["slug"], version, "webtools")
            await gate.admit(methods=CALLS if posted is not None else ())
            if req.method == "GET":
                await surfaces.webtools_metadata(gate, send)
            elif posted is not None:
                await surfaces.webtools_call(gate, send, posted)
            else:
                await respond(send, 405, headers=[("allow", "GET" if version else "GET, POST")])
        except Refused as refused:
            assert gate is not None  # admission and the per-call checks refuse, after it
            await respond_json(send, refused.status, *webtools_refusal(gate, refused))
        except Exception as exc:
            await respond_json(send, *webtools_failure(req, exc))

    async def streamable(self, gate: Gate, req: HttpRequest, send: Send) -> None:
        if req.method == "OPTIONS":
            await gate.admit(preflight=True)
            headers = [
                *gate.cors_headers(),
                ("access-control-allow-methods", "GET, POST, DELETE, OPTIONS"),
                ("access-control-allow-headers", CORS_ALLOW_HEADERS),
                ("access-control-max-age", "86400"),
            ]
            await respond(send, 204, headers=headers)
            return
        if req.method not in ("GET", "POST", "DELETE"):
            await respond(send, 405, headers=[("allow", "GET, POST, DELETE, OPTIONS")])
            return
        await gate.admit()
        if req.method != "POST":
            gate.check_protocol_version_header()
        if req.method == "POST":
            await entrance.post(gate, send)
        elif req.method == "GET" and "text/event-stream" not in req.header("accept", ""):
            await surfaces.server_info(gate, send)
        elif req.method == "GET":
            await streamable.handle_get(gate, send)
        else:
            await streamable.handle_delete(gate, send)


def webtools_refusal(gate: Gate, refused: Refused) -> tuple[dict[str, Any], Headers]:
    """A refusal of the pipeline in the Webtools envelope (and its headers)."""
    if refused.status == 404 and gate.version:
        _, body = webtools.not_found(gate.slug, gate.version)
    else:
        code = WEBTOOL_CODES.get(refused.status, "INTERNAL_ERROR")
        body = {"status": "error", "error": {"code": code, "message": refused.error.message}}
    cors = gate.cors_headers() if gate.origin_ok else []
    return body, [*refused.headers, *cors]


def webtools_failure(req: HttpRequest, exc: Exception) -> tuple[int, dict[str, Any], Headers]:
    """A Webtools request that failed unexpectedly, in the Webtools envelope."""
    status, message, headers = failure(req, exc)
    code = "UNAVAILABLE" if status == 503 else "INTERNAL_ERROR"
    return status, {"status": "error", "error": {"code": code, "message": message}}, headers


def failure(req: HttpRequest, exc: Exception) -> tuple[int, str, Headers]:
    """How a request that failed unexpectedly is answered (status, message, headers), logged:
    Redis or Postgres down, hung or restarting is a clean, retryable 503; anything else 500."""
    service = outage_of(exc)
    if service is not None:
        log.warning("%s %s: %s unavailable: %r", req.method, req.path, service, exc)
        return 503, outage_message(service), [("retry-after", str(RETRY_AFTER_SECONDS))]
    log.exception("Unhandled error on %s %s", req.method, req.path)
    return 500, "Internal error", []


def _store_call_log_now() -> None:
    from django.db import close_old_connections

    from activity.drain import drain_everything

    try:
        drain_everything()
    except Exception:
        log.exception("call log: could not store the queued rows at shutdown")
    finally:
        close_old_connections()


# The surface each path of /mcp/<slug> is (the pipeline's Arrival); /tools/<name> is "rest".
SURFACES: dict[str, Surface] = {
    "/": "mcp",
    "/openapi.json": "document",
    "/.well-known/mcp.json": "document",
    "/sse": "legacy_sse",
    "/messages/": "legacy_sse",
    "/messages": "legacy_sse",
}

ROUTES: dict[str, Route] = {
    "/": McpApp.streamable,
    "/openapi.json": McpApp.openapi,
    "/.well-known/mcp.json": McpApp.discovery,
    "/sse": McpApp.legacy_stream,
    "/messages/": McpApp.legacy_message,
    "/messages": McpApp.legacy_message,
}
