"""MCP 2026-07-28 (stateless) on /mcp/<slug>, beside the session era on the same URL.

Every request carries what the server needs to know about its client in `params._meta`, so any
worker answers it without a session. Checks run in the order the spec's error ladder gives them:
the `_meta` envelope (-32602), the routing headers against the body (-32020), the protocol
version (-32022), then the method (HTTP 404 + -32601). Results carry `resultType`, the server's
identity and, where cacheable, `ttlMs`/`cacheScope`. A call that needs the client's input answers
`input_required` (MRTR) with a sealed `requestState` holding the answers of earlier rounds, so the
same workflow re-runs from the top and finds them.
"""

import asyncio
import base64
import binascii
import hashlib
import logging
import re
import time

import orjson
from django.conf import settings

from mcp_protocol import errors, sealed_state, sse, versions
from mcp_protocol.context import LOG_LEVELS
from mcp_protocol.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    UNSUPPORTED_PROTOCOL_VERSION,
    InputRequired,
    McpError,
)
from mcp_protocol.jsonrpc import Notification, Request, error_message, result_message

from .. import methods
from ..agents import routing as agents_routing
from . import calllog, listen
from .http import respond, respond_json, send_chunk, start_sse
from .stateless_context import StatelessContext

log = logging.getLogger(__name__)

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

# Versions this path serves; the discover result also names the session-era ones (dual era).
MODERN_VERSIONS = (versions.STATELESS,)
# Methods a modern client may not use: they belong to the session era only.
REMOVED_METHODS = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    }
)
# MRTR is allowed on these only; every other method must answer complete or fail.
MRTR_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# Methods whose Mcp-Name header must name a body parameter.
NAME_PARAMS = {
    **MRTR_METHODS,
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
HTTP_STATUS = {
    errors.METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    errors.MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}
BASE64_WORD = re.compile(r"^=\?base64\?(.*)\?=$", re.DOTALL)
# Visible ASCII, space and tab: what a literal (not base64-wrapped) header value may hold.
LITERAL_HEADER = re.compile(r"^[\x20-\x7e\t]*$")

# Handlers other apps add for methods of their own (an extension's methods):
# `async handler(call: StatelessCall) -> dict`.
EXTRA_METHODS: dict = {}


def register_method(method: str, handler) -> None:
    EXTRA_METHODS[method] = handler


def _meta_of(params) -> dict | None:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else None


def is_modern(gate, parsed) -> bool:
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
    if gate.session_id:
        return False
    return gate.request.header("mcp-protocol-version", "").strip() in MODERN_VERSIONS


def _http_status(error: McpError) -> int:
    if error.http_status != 200:
        return error.http_status
    return HTTP_STATUS.get(error.code, 200)


def _refusal(code: int, message: str, data=None) -> McpError:
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


def _check_routing_headers(headers: dict, request: Request) -> None:
    method_header = headers.get("mcp-method")
    if method_header is None:
        raise _refusal(HEADER_MISMATCH, "Missing Mcp-Method header")
    if method_header.strip(" \t") != request.method:
        raise _refusal(
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
        raise _refusal(HEADER_MISMATCH, f"Missing Mcp-Name header (the body has {name_param})")
    try:
        value = decode_header_value(raw)
    except ValueError as exc:
        raise _refusal(HEADER_MISMATCH, f"Malformed Mcp-Name header: {exc}") from None
    if value != body_value:
        raise _refusal(
            HEADER_MISMATCH, f"Mcp-Name header does not match the body's params.{name_param}"
        )


def _render_argument(value) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    return None


def header_parameters(input_schema) -> list[tuple[str, str]]:
    """(property, header name) of every top-level property marked with `x-mcp-header`."""
    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    if not isinstance(properties, dict):
        return []
    found = []
    for name, schema in properties.items():
        token = schema.get("x-mcp-header") if isinstance(schema, dict) else None
        if isinstance(token, str) and token:
            found.append((name, f"mcp-param-{token.lower()}"))
    return found


def check_parameter_headers(input_schema, arguments: dict, headers: dict) -> None:
    """Each `x-mcp-header` argument and its Mcp-Param-* header: both absent, or equal."""
    for name, header in header_parameters(input_schema):
        raw = headers.get(header)
        value = arguments.get(name)
        if raw is None and value is None:
            continue
        if raw is None:
            raise _refusal(HEADER_MISMATCH, f"Missing {header} header for argument {name!r}")
        if value is None:
            raise _refusal(HEADER_MISMATCH, f"{header} header sent without argument {name!r}")
        try:
            decoded = decode_header_value(raw)
        except ValueError as exc:
            raise _refusal(HEADER_MISMATCH, f"Malformed {header} header: {exc}") from None
        if decoded != _render_argument(value):
            raise _refusal(HEADER_MISMATCH, f"{header} header does not match argument {name!r}")


# -- the envelope ---------------------------------------------------------------------------------


class Envelope:
    """What `_meta` says about the client of one request."""

    __slots__ = ("protocol_version", "capabilities", "client_info", "log_level", "progress_token")

    def __init__(self, meta: dict):
        self.protocol_version = meta[META_VERSION]
        self.capabilities = meta[META_CAPABILITIES]
        self.client_info = meta.get(META_CLIENT_INFO)
        self.log_level = meta.get(META_LOG_LEVEL)
        self.progress_token = meta.get("progressToken")


def read_envelope(request: Request, headers: dict) -> Envelope:
    meta = _meta_of(request.params)
    missing = [key for key in (META_VERSION, META_CAPABILITIES) if meta is None or key not in meta]
    if missing:
        raise _refusal(INVALID_PARAMS, f"Missing params._meta fields: {', '.join(missing)}")
    header_version = headers.get("mcp-protocol-version")
    if header_version is None:
        raise _refusal(HEADER_MISMATCH, "Missing MCP-Protocol-Version header")
    if header_version.strip(" \t") != meta[META_VERSION]:
        raise _refusal(
            HEADER_MISMATCH,
            "MCP-Protocol-Version header does not match params._meta "
            f"{META_VERSION} ({meta[META_VERSION]!r})",
        )
    _check_routing_headers(headers, request)
    version = meta[META_VERSION]
    if version not in MODERN_VERSIONS:
        raise _refusal(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version: {version}",
            {"supported": list(MODERN_VERSIONS), "requested": version},
        )
    if not isinstance(meta[META_CAPABILITIES], dict):
        raise _refusal(INVALID_PARAMS, f"params._meta {META_CAPABILITIES} must be an object")
    client_info = meta.get(META_CLIENT_INFO)
    if client_info is not None and not isinstance(client_info, dict):
        raise _refusal(INVALID_PARAMS, f"params._meta {META_CLIENT_INFO} must be an object")
    level = meta.get(META_LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        raise _refusal(
            INVALID_PARAMS,
            f"params._meta {META_LOG_LEVEL} must be one of {', '.join(LOG_LEVELS)}",
        )
    return Envelope(meta)


# -- results --------------------------------------------------------------------------------------


def cache_hints(snapshot) -> dict:
    # A server behind keys may answer differently per key: never share it across credentials.
    scope = "public" if snapshot.auth_mode == "none" else "private"
    return {"ttlMs": int(getattr(settings, "MCP_CACHE_TTL_MS", 60_000)), "cacheScope": scope}


def decorate(snapshot, method: str, result: dict) -> dict:
    result = dict(result)
    result.setdefault("resultType", "complete")
    meta = dict(result.get("_meta") or {})
    meta[META_SERVER_INFO] = snapshot.server_info
    result["_meta"] = meta
    if method in CACHEABLE and result["resultType"] == "complete":
        result.update(cache_hints(snapshot))
    return result


def discover(snapshot) -> dict:
    result = {
        "supportedVersions": list(versions.SUPPORTED),
        "capabilities": dict(snapshot.capabilities),
    }
    if snapshot.instructions:
        result["instructions"] = snapshot.instructions
    return result


# -- MRTR: the sealed requestState ----------------------------------------------------------------


def _state_secret() -> bytes:
    secret = getattr(settings, "MCP_REQUEST_STATE_SECRET", "") or settings.SECRET_KEY
    return secret.encode()


def _state_bind(gate, request: Request) -> dict:
    target = request.params.get(MRTR_METHODS[request.method])
    return {
        "server": gate.snapshot.server_id,
        "tool": f"{request.method} {target}",
        "credential": gate.credential.ident,
    }


def _request_digest(request: Request) -> str:
    """The request's own arguments: answers given for one set of arguments never serve another."""
    arguments = request.params.get("arguments")
    return hashlib.sha256(orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)).hexdigest()


def read_answers(gate, request: Request) -> dict:
    """The client's answers so far: those sealed in requestState, then this round's."""
    params = request.params
    answers: dict = {}
    if "requestState" in params:
        token = params["requestState"]
        if not isinstance(token, str):
            raise errors.invalid_params("requestState must be a string")
        state = sealed_state.unseal(token, secret=_state_secret(), bind=_state_bind(gate, request))
        if state.get("request") != _request_digest(request):
            raise errors.invalid_params(
                "Invalid requestState", {"reason": "issued for other arguments"}
            )
        answers.update(state.get("answers") or {})
    if "inputResponses" in params:
        responses = params["inputResponses"]
        if not isinstance(responses, dict):
            raise errors.invalid_params("inputResponses must be an object")
        for key, value in responses.items():
            if not isinstance(value, dict):
                raise errors.invalid_params(
                    f"inputResponses.{key} must be an object (the client's result)"
                )
        answers.update(responses)
    return answers


def input_required(gate, request: Request, exc: InputRequired, ctx: StatelessContext) -> dict:
    state = sealed_state.seal(
        {"answers": ctx.used_answers, "request": _request_digest(request)},
        secret=_state_secret(),
        bind=_state_bind(gate, request),
        ttl_seconds=int(getattr(settings, "MCP_REQUEST_STATE_TTL_SECONDS", 3600)),
    )
    return {
        "resultType": "input_required",
        "inputRequests": exc.input_requests,
        "requestState": state,
    }


# -- answering one POST ---------------------------------------------------------------------------


class Responder:
    """Answers one POST: plain JSON when the call ends before it has anything to stream (so an
    error keeps its HTTP status), an SSE stream from its first notification on."""

    def __init__(self, send, headers, *, can_stream: bool):
        self.send = send
        self.headers = headers
        self.can_stream = can_stream
        self.streaming = False
        self.done = False
        self.lock = asyncio.Lock()

    async def notify(self, message: dict) -> None:
        if not self.can_stream:
            return
        async with self.lock:
            if self.done:
                return
            if not self.streaming:
                await start_sse(self.send, self.headers)
                self.streaming = True
            await send_chunk(self.send, sse.event(orjson.dumps(message)))

    async def keep_alive(self) -> None:
        async with self.lock:
            if self.streaming and not self.done:
                await send_chunk(self.send, sse.comment())

    async def finish(self, message: dict, status: int = 200) -> None:
        async with self.lock:
            if self.done:
                return
            self.done = True
            if self.streaming:
                await send_chunk(self.send, sse.event(orjson.dumps(message)), more=False)
            else:
                await respond_json(self.send, status, message, self.headers)


class StatelessCall:
    """One admitted modern request, as extension handlers see it."""

    __slots__ = ("gate", "request", "envelope", "context")

    def __init__(self, gate, request: Request, envelope: Envelope, context: StatelessContext):
        self.gate = gate
        self.request = request
        self.envelope = envelope
        self.context = context


async def handle(gate, send, parsed) -> None:
    headers = gate.cors_headers()
    if isinstance(parsed, Notification):
        # A modern client has nothing to tell the server out of band; accept and ignore.
        await respond(send, 202, headers=headers)
        return
    if not isinstance(parsed, Request):
        error = _refusal(
            errors.INVALID_REQUEST, "Protocol version 2026-07-28 takes one request per POST"
        )
        await respond_json(send, 400, error_message(None, error), headers)
        return
    request = parsed
    started = time.perf_counter()
    try:
        envelope = read_envelope(request, gate.request.headers)
    except McpError as exc:
        await respond_json(send, _http_status(exc), error_message(request.id, exc), headers)
        return
    if request.method == "subscriptions/listen":
        await listen.serve(gate, send, request)
        return
    # A meta-call becomes the call it names (servers/agents/routing.py); the headers were
    # checked against what the client sent.
    routed = agents_routing.route(gate, request)
    try:
        handler = _handler(gate, request)
    except McpError as exc:
        reply = error_message(request.id, exc)
        calllog.record(gate, request.method, request.params, reply, started, **_who(envelope))
        await respond_json(send, _http_status(exc), reply, headers)
        return
    responder = Responder(send, headers, can_stream=gate.request.accepts("text/event-stream"))
    await run_until_done_or_gone(gate, routed, envelope, handler, responder)


def _handler(gate, request: Request):
    method = request.method
    if method == "tools/call":
        _check_tool_headers(gate, request)
    # An extension may also take over a core method (the tasks extension: tools/call).
    if method in EXTRA_METHODS:
        return EXTRA_METHODS[method]
    if method == "server/discover":
        return _run_discover
    if method in MRTR_METHODS:
        return _run_mrtr
    if method in methods.METHODS:
        return _run_method
    if method in REMOVED_METHODS:
        raise McpError(
            errors.METHOD_NOT_FOUND,
            f"Method not found: {method} is not part of protocol version 2026-07-28",
            http_status=404,
        )
    raise McpError(errors.METHOD_NOT_FOUND, f"Method not found: {method}", http_status=404)


def _check_tool_headers(gate, request: Request) -> None:
    name = request.params.get("name")
    tool = gate.snapshot.tools.get(name) if isinstance(name, str) else None
    arguments = request.params.get("arguments")
    if tool is not None and isinstance(arguments, dict):
        check_parameter_headers(tool.wire.get("inputSchema"), arguments, gate.request.headers)


async def _run_discover(call: StatelessCall) -> dict:
    return discover(call.gate.snapshot)


async def _run_method(call: StatelessCall) -> dict:
    request = call.request
    if request.method in ("tools/call", "resources/read"):
        result = await agents_routing.before(call.gate, request, call.context)
        if result is not None:
            return result
    result = await methods.call_method(
        call.gate.snapshot, request.method, request.params, call.context
    )
    return await agents_routing.after(call.gate, request, result)


async def _run_mrtr(call: StatelessCall) -> dict:
    try:
        return await _run_method(call)
    except InputRequired as exc:
        return input_required(call.gate, call.request, exc, call.context)


async def run_until_done_or_gone(gate, request, envelope, handler, responder: Responder) -> None:
    """Run the call; a client that closes the connection cancels it (2026-07-28 cancellation)."""
    started = time.perf_counter()
    ctx = StatelessContext(
        protocol_version=envelope.protocol_version,
        client_capabilities=envelope.capabilities,
        client_info=envelope.client_info,
        credential=gate.credential.ident,
        log_level=envelope.log_level,
        progress_token=envelope.progress_token,
        emit=responder.notify,
        client_headers=gate.request.headers,
    )
    call = StatelessCall(gate, request, envelope, ctx)
    reply = None

    async def run() -> None:
        nonlocal reply
        status = 200
        try:
            if request.method in MRTR_METHODS:
                ctx.answers = read_answers(gate, request)
            result = await handler(call)
            reply = result_message(request.id, decorate(gate.snapshot, request.method, result))
        except McpError as exc:
            reply, status = error_message(request.id, exc), _http_status(exc)
        except Exception:
            log.exception("Internal error in %s on %s", request.method, gate.snapshot.slug)
            error = McpError(errors.INTERNAL_ERROR, "Internal error")
            reply, status = error_message(request.id, error), 500
        await responder.finish(reply, status)

    task = asyncio.create_task(run())
    gone = asyncio.create_task(listen.wait_for_disconnect(gate.request.receive))
    keepalive = settings.MCP_SSE_KEEPALIVE_SECONDS
    try:
        while True:
            done, _ = await asyncio.wait(
                {task, gone}, timeout=keepalive, return_when=asyncio.FIRST_COMPLETED
            )
            if task in done:
                task.result()
                return
            if gone in done:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                return
            await responder.keep_alive()
    finally:
        gone.cancel()
        if not task.done():
            task.cancel()
        # A call cancelled by its client is logged without a reply, as the session era does.
        calllog.record(gate, request.method, request.params, reply, started, **_who(envelope))


def _who(envelope: Envelope) -> dict:
    return {"client_info": envelope.client_info}
