"""The shape of one live-inspector event, and what is hidden from it.

An event describes one finished request to /mcp/<slug>: when, which client (name and version from
`initialize`'s clientInfo, the session, or the stateless `_meta`; else the User-Agent), which
transport and protocol revision, which method and tool/resource/prompt, the HTTP status, the
latency, and for a refusal the reason the endpoint decided (`Refused.reason`, gateway/endpoint/
gate.py) or, for refusals answered as JSON-RPC errors, the reason read from the error.

Hidden before the event leaves the process: tool and prompt arguments and the client's answers
to server requests (each value "[redacted]", keys kept) unless the server opted in to argument
logging (the call log's `logArguments`, with the call log's own redaction of secret-looking
keys); the Authorization header; anything shaped like an API key or bearer token; and every
value of the organization's vault (vault/masking.py), in any of its encoded forms.
"""

import os
import socket
import time
import uuid

import orjson

from activity.recorder import REDACTED, redact_arguments, scrub_error
from inspector.asked import asked_of
from mcp_protocol.errors import UNSUPPORTED_PROTOCOL_VERSION
from servers import access
from vault.masking import Masker

# The most of a request or response body an event carries; the rest is cut with a note.
MAX_BODY_BYTES = 32 * 1024
PROCESS = f"{socket.gethostname()}:{os.getpid()}"

# Every reason a refusal can carry, in the words the inspector shows.
REASONS = {
    "host_refused": "Host header not allowed",
    "unknown_server": "No live server at this address for this caller",
    "broken_definition": "The server's definition does not compile",
    "origin_refused": "Origin refused (not the deployment's own, nor in the server's allowed origins)",
    "missing_key": "No API key or access token sent",
    "unknown_key": "Unknown API key or access token",
    "revoked_key": "API key or access token revoked or expired",
    "suspended_key": "API key suspended: its creator left the organization or may not hold keys",
    "key_of_other_organization": "Key of another organization",
    "key_limited_to_other_servers": "Key limited to other servers",
    "token_for_other_server": "Access token issued for another server",
    "api_keys_not_accepted": "This server accepts OAuth only, not API keys",
    "insufficient_scope": "Access token lacks the scope to call tools",
    "unauthorized": "Not authorized",
    "paused": "Server paused",
    "draft": "Server is a draft (told to its own organization only)",
    "rate_limited": "Rate limited",
    "too_many_streams": "Too many open streams",
    "unsupported_protocol_version": "Unsupported protocol version",
    "missing_session": "Missing or unknown session",
    "body_too_large": "Body too large",
    "tool_access_refused": "Per-tool access refused",
    # The OAuth endpoints' refusals (inspector/oauth_watch.py), by their OAuth error.
    "invalid_client": "OAuth client unknown or its authentication failed",
    "invalid_grant": "Authorization code or refresh token not valid",
    "pkce_mismatch": "PKCE mismatch: the code_verifier does not match the code_challenge",
    "invalid_target": "Resource not allowed: not this server, or not one that takes OAuth",
    "invalid_request": "Malformed OAuth request",
    "invalid_scope": "Scope not allowed",
    "unsupported_grant_type": "Unsupported grant type",
    "unsupported_response_type": "Unsupported response type",
    "invalid_client_metadata": "Client registration refused",
    "invalid_redirect_uri": "Redirect URI refused",
    "access_denied": "The person declined the authorization",
    "too_many_requests": "Too many registrations from this address",
    "not_member": "The signed-in person is not a member of the server's organization",
    "cross_origin_post": "Consent form posted from another site",
    "not_found": "No OAuth metadata: the server does not take OAuth",
}

SHOWN_HEADERS = (
    "user-agent",
    "origin",
    "content-type",
    "accept",
    "mcp-protocol-version",
    "mcp-session-id",
    "mcp-method",
    "mcp-name",
    "last-event-id",
    "authorization",
)
# Params holding what a person or model typed: redacted unless the server logs arguments.
ARGUMENT_PARAMS = {
    "tools/call": "arguments",
    "prompts/get": "arguments",
    "tasks/create": "arguments",
}
TARGET_PARAMS = {
    "tools/call": "name",
    "tasks/create": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "resources/subscribe": "uri",
    "resources/unsubscribe": "uri",
    "tasks/get": "taskId",
    "tasks/result": "taskId",
    "tasks/cancel": "taskId",
    "tasks/update": "taskId",
}
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"


def transport_of(path_rest: str) -> str:
    if path_rest in ("/sse", "/messages", "/messages/"):
        return "sse"
    if path_rest.startswith("/tools/"):
        return "rest"
    if path_rest == "/":
        return "streamable-http"
    return "http"


def parse_json(raw: bytes):
    try:
        return orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None


def parse_sse(raw: bytes) -> list:
    """The JSON messages of an SSE body (priming events and comments left out)."""
    messages = []
    for block in raw.split(b"\n\n"):
        data = b"\n".join(
            line[5:].lstrip() for line in block.split(b"\n") if line.startswith(b"data:")
        )
        parsed = parse_json(data) if data else None
        if parsed is not None:
            messages.append(parsed)
    return messages


def redact_message(message, *, log_arguments: bool):
    """One JSON-RPC message with what the client typed redacted (a copy; the original is
    never touched)."""
    if not isinstance(message, dict):
        return message
    method = message.get("method")
    params = message.get("params")
    if method in ARGUMENT_PARAMS and isinstance(params, dict):
        name = ARGUMENT_PARAMS[method]
        if name in params:
            params = {**params, name: redact_arguments(params[name], keep=log_arguments)}
        meta = params.get("_meta")
        if isinstance(meta, dict) and "inputResponses" in meta and not log_arguments:
            params["_meta"] = {**meta, "inputResponses": REDACTED}
        if "inputResponses" in params and not log_arguments:
            params["inputResponses"] = REDACTED
        return {**message, "params": params}
    if method == "completion/complete" and isinstance(params, dict) and not log_arguments:
        argument = params.get("argument")
        if isinstance(argument, dict) and "value" in argument:
            params = {**params, "argument": {**argument, "value": REDACTED}}
        return {**message, "params": params}
    if method is None and "result" in message and "id" in message and not log_arguments:
        # The client's answer to a server request (elicitation, sampling, roots).
        return {**message, "result": redact_arguments(message["result"], keep=False)}
    return message


def redact_body(body, *, log_arguments: bool):
    if isinstance(body, list):
        return [redact_message(m, log_arguments=log_arguments) for m in body]
    return redact_message(body, log_arguments=log_arguments)


def masked(data, masker: Masker | None):
    """Credential-shaped text and vault values replaced, in every string of the structure."""
    text = orjson.dumps(data, default=str).decode()
    text = scrub_error_unbounded(text)
    if masker is not None:
        text = masker.mask(text)
    return orjson.loads(text)


# Every credential scrub_error hides starts with one of these: a text without any (nearly every
# event) skips its regular expression, which costs a fifth of a millisecond per event.
CREDENTIAL_MARKERS = ("gmcp_", "gpat_", "Bearer", "Basic")


def scrub_error_unbounded(text: str) -> str:
    if not any(marker in text for marker in CREDENTIAL_MARKERS):
        return text
    # scrub_error cuts long texts; scrub in pieces that keep each credential whole.
    if len(text) < 1900:
        return scrub_error(text)
    return "".join(scrub_error(part) for part in _split_on_spaces(text, 1500))


def _split_on_spaces(text: str, size: int):
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        while end < len(text) and text[end] not in ' ,"':
            end += 1
        yield text[start:end]
        start = end


def shown_headers(headers: dict) -> dict:
    shown = {name: headers[name] for name in SHOWN_HEADERS if name in headers}
    if "authorization" in shown:
        scheme = shown["authorization"].split(" ", 1)[0]
        shown["authorization"] = f"{scheme} ***"
    return shown


def body_for_event(raw: bytes, content_type: str, *, log_arguments: bool, from_client: bool):
    """The body as JSON (an SSE body as the list of its messages); what the client typed is
    redacted in what it sent (the server's own messages are shown, masked later)."""
    if len(raw) > MAX_BODY_BYTES:
        return {"[truncated]": f"{len(raw)} bytes, not shown"}
    if "text/event-stream" in content_type:
        parsed = parse_sse(raw)
    else:
        parsed = parse_json(raw)
        if parsed is None:
            return raw.decode("utf-8", "replace") if raw else None
    return redact_body(parsed, log_arguments=log_arguments) if from_client else parsed


def first_message(body):
    if isinstance(body, list):
        return next((m for m in body if isinstance(m, dict)), None)
    return body if isinstance(body, dict) else None


def client_of(session, request_message, response_message, user_agent: str) -> dict:
    info = session.client_info if session is not None else None
    params = request_message.get("params") if request_message else None
    if not info and isinstance(params, dict):
        meta = params.get("_meta")
        info = params.get("clientInfo") or (
            meta.get(META_CLIENT_INFO) if isinstance(meta, dict) else None
        )
    info = info if isinstance(info, dict) else {}
    return {
        "name": str(info.get("name") or "")[:200],
        "version": str(info.get("version") or "")[:100],
        "userAgent": user_agent[:300],
    }


def revision_of(session, request_message, response_message, header: str | None) -> str:
    if session is not None:
        return session.protocol_version
    result = response_message.get("result") if response_message else None
    if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
        return result["protocolVersion"]  # negotiated by initialize
    params = request_message.get("params") if request_message else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and isinstance(meta.get(META_VERSION), str):
        return meta[META_VERSION]
    return header or ""


def task_id_of(response_message) -> str:
    result = response_message.get("result") if response_message else None
    if not isinstance(result, dict):
        return ""
    task = result.get("task")
    if isinstance(task, dict) and isinstance(task.get("taskId"), str):
        return task["taskId"]
    if result.get("resultType") == "task" and isinstance(result.get("taskId"), str):
        return result["taskId"]
    return ""


def reason_of_reply(status: int, response_message) -> str:
    """For refusals answered as a JSON-RPC error rather than decided by the gate."""
    error = response_message.get("error") if response_message else None
    code = error.get("code") if isinstance(error, dict) else None
    message = str(error.get("message", "")) if isinstance(error, dict) else ""
    if status == 413:
        return "body_too_large"
    if status == 429:
        return "rate_limited"
    if code == UNSUPPORTED_PROTOCOL_VERSION or message.startswith("Unsupported MCP-Protocol"):
        return "unsupported_protocol_version"
    if code == -32001 or "Mcp-Session-Id header is required" in message:
        return "missing_session"
    return ""


# What a per-tool access limit withholds, by method: the caller is told "Unknown tool" (it must
# not learn the tool exists), the owner watching is told why.
WITHHELD_KINDS = {"tools/call": "tools", "tasks/create": "tools", "prompts/get": "prompts"}


def withheld(gate, method: str, target: str, response_message) -> bool:
    """An error answered for a tool or prompt the credential's access limits leave out."""
    kind = WITHHELD_KINDS.get(method)
    if not kind or not target or gate.snapshot is None:
        return False
    result = response_message.get("result") if response_message else None
    if not (response_message and "error" in response_message) and not (
        isinstance(result, dict) and result.get("isError")
    ):
        return False
    try:
        allowed = getattr(access.scope_for(gate.snapshot, gate.credential), kind)
    except (AttributeError, TypeError):
        return False
    return allowed is not None and target not in allowed


def outcome_of(status: int, reason: str, response_body) -> tuple[str, str]:
    """(ok | tool_error | error | refused, the error's message)."""
    message = first_message(response_body)
    error = message.get("error") if message else None
    text = str(error.get("message", "")) if isinstance(error, dict) else ""
    if reason:
        return "refused", text
    if status >= 400:
        return "error", text
    if error is not None:
        return "error", text
    result = message.get("result") if message else None
    if isinstance(result, dict) and result.get("isError"):
        content = result.get("content") or []
        first = next((c for c in content if isinstance(c, dict) and c.get("type") == "text"), {})
        return "tool_error", str(first.get("text", ""))[:500]
    return "ok", ""


def build(
    *,
    gate,
    path_rest: str,
    status: int,
    request_raw: bytes,
    response_raw: bytes,
    response_type: str,
    started: float,
    finished: float,
    refusal_reason: str = "",
    masker: Masker | None = None,
) -> dict:
    """The event of one finished request (see the module docstring for what is hidden)."""
    req = gate.request
    snapshot = gate.snapshot
    log_arguments = bool(snapshot.log_arguments)
    request_body = body_for_event(
        request_raw,
        req.header("content-type", "") or "",
        log_arguments=log_arguments,
        from_client=True,
    )
    response_body = body_for_event(
        response_raw, response_type, log_arguments=log_arguments, from_client=False
    )
    request_message = first_message(request_body)
    response_message = first_message(
        [m for m in response_body if isinstance(m, dict) and ("result" in m or "error" in m)]
        if isinstance(response_body, list)
        else response_body
    )
    method = ""
    target = ""
    if isinstance(request_body, list):
        method = f"batch of {len(request_body)}"
    elif request_message:
        method = str(
            request_message.get("method") or ("response" if "id" in request_message else "")
        )
        params = request_message.get("params")
        name = TARGET_PARAMS.get(method)
        if name and isinstance(params, dict) and isinstance(params.get(name), str):
            target = params[name][:300]
    elif path_rest.startswith("/tools/"):
        method, target = "tools/call", path_rest[len("/tools/") :]
    if not method:
        method = f"{req.method} {'stream' if 'text/event-stream' in (req.header('accept') or '') else path_rest}"
    reason = refusal_reason or reason_of_reply(status, response_message)
    if not reason and withheld(gate, method, target, response_message):
        reason = "tool_access_refused"
    outcome, error = outcome_of(status, reason, response_body)
    event = {
        "id": uuid.uuid4().hex,
        "at": time.time() - (finished - started),
        "process": PROCESS,
        "server": snapshot.slug,
        "httpMethod": req.method,
        "transport": transport_of(path_rest),
        "revision": revision_of(
            gate.session, request_message, response_message, req.header("mcp-protocol-version")
        ),
        "client": client_of(
            gate.session, request_message, response_message, req.header("user-agent", "") or ""
        ),
        "credential": gate.caller.credential_name,
        "method": method[:100],
        "target": target,
        "status": status,
        "outcome": outcome,
        "reason": reason,
        "reasonText": REASONS.get(reason, ""),
        "error": error[:500],
        "latencyMs": round((finished - started) * 1000, 2),
        "taskId": task_id_of(response_message),
        "asked": asked_of(response_body),
        "request": {"headers": shown_headers(req.headers), "body": request_body},
        "response": {"contentType": response_type, "body": response_body},
    }
    return masked(event, masker)
