"""Host functions: what sandboxed code may ask of getmcp, each a call the sandbox pauses on.

| function                                   | does                                                     |
| ------------------------------------------ | -------------------------------------------------------- |
| fetch(url, method=, headers=, json=, ...)  | one request through the SSRF guard (servers.outbound)   |
| log(level, message)                        | an MCP log notification                                  |
| progress(progress, total=None, message=)   | an MCP progress notification                             |
| elicit(message, schema)                    | asks the user (elicitation/create), returns the answer   |
| sample(messages, max_tokens=, ...)         | asks the client's model (sampling/createMessage)         |
| call_tool(name, arguments=None)            | calls another tool of the same server (depth-limited)    |

`secrets["NAME"]` is a plain mapping of the secrets the source names literally (nothing else of
the vault enters the sandbox); every value is masked in results, logs, errors and test runs.
elicit and sample go through `ctx.request`, the machinery workflow steps use: a server-to-client
request in the session era, `input_required` and a re-run from the top in the stateless era
(keys `code_elicit1`, `code_sample2`, ... in call order, so a deterministic run finds its answers).
"""

import contextvars
import time
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from mcp_protocol.context import LOG_LEVELS, RequestContext
from servers.outbound import BlockedDestination, OutboundError, OutboundTimeout, guarded_request

from .. import calling
from .tool import CodeTool

if TYPE_CHECKING:
    from vault.masking import Masker


class _Run(Protocol):
    """What the host sees of the run it serves (runtime.Run)."""

    ctx: RequestContext
    masker: "Masker"
    tool: CodeTool

    def wall_left(self) -> float: ...


FUNCTIONS = ("fetch", "log", "progress", "elicit", "sample", "call_tool")
# Host calls that wait for the client: the sandbox is parked (dumped, its worker released).
CLIENT_WAITS = frozenset({"elicit", "sample", "call_tool"})
FETCH_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
FETCH_MAX_BYTES = 5 * 1024 * 1024
FETCH_DEFAULT_TIMEOUT = 30.0

# How deep call_tool has nested in this task (a code tool calling a code tool calling ...).
call_depth: contextvars.ContextVar[int] = contextvars.ContextVar("code_call_depth", default=0)


class SandboxException(Exception):
    """Raised inside the sandbox as `exc_type(message)`: code may catch it."""

    def __init__(self, exc_type: str, message: str) -> None:
        super().__init__(message)
        self.exc_type = exc_type
        self.message = message


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise SandboxException("TypeError", f"{what} must be a string")
    return value


def _string_map(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SandboxException("TypeError", f"{what} must be a dict")
    return {str(k): v if isinstance(v, str) else str(v) for k, v in value.items()}


def _fetch_exception(exc: OutboundError) -> str:
    """The built-in exception a failed fetch raises in the sandbox, all of them OSErrors as in
    Python: PermissionError for a destination the SSRF guard refuses, TimeoutError for a time
    limit, OSError for the rest (DNS, refused or reset connections, TLS: Python's
    ConnectionError, which Monty does not have)."""
    if isinstance(exc, BlockedDestination):
        return "PermissionError"
    if isinstance(exc, OutboundTimeout):
        return "TimeoutError"
    return "OSError"


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or content_type.endswith("+json")


class Host:
    """The host side of one run: answers host calls and keeps what a test run shows."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.ctx = run.ctx
        self.masker = run.masker
        self.asked = 0  # client requests so far: the stateless era's answer keys

    async def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return await getattr(self, f"_{name}")(*args, **kwargs)

    # -- fetch ------------------------------------------------------------------------------------

    async def _fetch(
        self,
        url: Any,
        method: Any = "GET",
        headers: Any = None,
        json: Any = None,
        data: Any = None,
        params: Any = None,
        timeout: Any = None,
    ) -> dict[str, Any]:
        url = _text(url, "fetch: url")
        method = _text(method, "fetch: method").upper()
        if method not in FETCH_METHODS:
            raise SandboxException("ValueError", f"fetch: method must be one of {FETCH_METHODS}")
        if data is not None and not isinstance(data, str | dict):
            raise SandboxException("TypeError", "fetch: data must be a string or a dict")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            raise SandboxException("ValueError", "fetch: timeout must be a number of seconds > 0")
        seconds = min(FETCH_DEFAULT_TIMEOUT if timeout is None else timeout, self.run.wall_left())
        request = {"method": method, "url": url, "headers": _string_map(headers, "headers")}
        try:
            response = await guarded_request(
                method,
                url,
                organization_id=self.run.tool.organization_id,
                headers=request["headers"],
                params=_string_map(params, "params") or None,
                json=json,
                content=data.encode() if isinstance(data, str) else None,
                data=data if isinstance(data, dict) else None,
                timeout=max(seconds, 0.001),
                max_bytes=FETCH_MAX_BYTES,
            )
        except OutboundError as exc:
            message = self.masker.mask(exc.message)
            self._trace(request, None, message)
            raise SandboxException(_fetch_exception(exc), message) from None
        self._trace(request, response, None)
        text = response.text
        parsed = None
        if _is_json(response.content_type):
            try:
                parsed = orjson.loads(response.content)
            except orjson.JSONDecodeError:
                parsed = None
        return {
            "status": response.status_code,
            "ok": 200 <= response.status_code < 300,
            "headers": dict(response.headers),
            "text": text,
            "json": parsed,
            "url": response.url,
            "truncated": response.truncated,
        }

    def _trace(self, request: dict[str, Any], response: Any, error: str | None) -> None:
        """The exchange as a test run shows it (the same shape as the http kind's)."""
        records = self.ctx.http_trace
        if records is None:
            return
        record = {"request": self.masker.mask_data(request)}
        if response is not None:
            record["response"] = {
                "status": response.status_code,
                "reason": response.reason_phrase,
                "headers": self.masker.mask_data(dict(response.headers)),
                "body": self.masker.mask(response.text[: 64 * 1024]),
                "bodyEncoding": "text",
                "size": len(response.content),
                "truncated": response.truncated,
                "url": self.masker.mask(response.url),
                "redirects": [self.masker.mask(u) for u in response.redirects],
                "elapsedMs": round(response.elapsed_ms, 1),
            }
        if error is not None:
            record["error"] = error
        records.append(record)

    # -- notifications ----------------------------------------------------------------------------

    async def _log(self, level: Any, message: Any = None, logger: Any = None) -> None:
        if message is None:  # log("text") means an info line
            level, message = "info", level
        if level not in LOG_LEVELS:
            raise SandboxException("ValueError", f"log: level must be one of {LOG_LEVELS}")
        if not isinstance(message, str):
            message = self.masker.mask_data(message)
        else:
            message = self.masker.mask(message)
        await self.ctx.log(level, message, logger if isinstance(logger, str) else "code")

    async def _progress(self, progress: Any, total: Any = None, message: Any = None) -> None:
        for value, what in ((progress, "progress"), (total, "total")):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float)
            ):
                raise SandboxException("TypeError", f"progress: {what} must be a number")
        if message is not None:
            message = self.masker.mask(_text(message, "progress: message"))
        await self.ctx.progress(progress, total, message)

    # -- asking the client ------------------------------------------------------------------------

    def _key(self, kind: str) -> str:
        self.asked += 1
        return f"code_{kind}{self.asked}"

    async def _elicit(self, message: Any, schema: Any = None) -> dict[str, Any]:
        message = self.masker.mask(_text(message, "elicit: message"))
        if schema is None:
            schema = {"type": "object", "properties": {}}
        if not isinstance(schema, dict):
            raise SandboxException("TypeError", "elicit: schema must be a dict (a JSON Schema)")
        params = {"message": message, "requestedSchema": schema}
        return await self.ctx.request(self._key("elicit"), "elicitation/create", params)

    async def _sample(
        self,
        messages: Any,
        max_tokens: Any = 512,
        system: Any = None,
        temperature: Any = None,
        stop: Any = None,
        model_preferences: Any = None,
    ) -> dict[str, Any]:
        if isinstance(messages, str):
            messages = [messages]
        if not isinstance(messages, list) or not messages:
            raise SandboxException("TypeError", "sample: messages must be a string or a list")
        wire = []
        for item in messages:
            if isinstance(item, str):
                item = {"role": "user", "content": {"type": "text", "text": item}}
            if not isinstance(item, dict) or "role" not in item or "content" not in item:
                raise SandboxException(
                    "ValueError", "sample: each message is a string or {role, content}"
                )
            if isinstance(item["content"], str):
                item = {**item, "content": {"type": "text", "text": item["content"]}}
            wire.append(self.masker.mask_data(item))
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise SandboxException("ValueError", "sample: max_tokens must be a whole number >= 1")
        params: dict[str, Any] = {"messages": wire, "maxTokens": max_tokens}
        if system is not None:
            params["systemPrompt"] = self.masker.mask(_text(system, "sample: system"))
        if temperature is not None:
            params["temperature"] = temperature
        if stop is not None:
            params["stopSequences"] = stop
        if model_preferences is not None:
            params["modelPreferences"] = model_preferences
        return await self.ctx.request(self._key("sample"), "sampling/createMessage", params)

    # -- call_tool --------------------------------------------------------------------------------

    async def _call_tool(self, name: Any, arguments: Any = None) -> dict[str, Any]:
        name = _text(name, "call_tool: name")
        if arguments is not None and not isinstance(arguments, dict):
            raise SandboxException("TypeError", "call_tool: arguments must be a dict")
        current = calling.current.get()
        snapshot = current.snapshot if current is not None else None
        if current is None or snapshot is None or name not in snapshot.tools:
            raise SandboxException("ValueError", f"call_tool: this server has no tool {name!r}")
        from django.conf import settings

        depth = call_depth.get()
        if depth >= settings.CODE_MAX_CALL_DEPTH:
            raise SandboxException(
                "RecursionError",
                f"call_tool: nested calls limit ({settings.CODE_MAX_CALL_DEPTH}) reached",
            )
        token = call_depth.set(depth + 1)
        try:
            return await current.tools_call(
                snapshot, {"name": name, "arguments": arguments or {}}, self.ctx
            )
        finally:
            call_depth.reset(token)


def describe(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], masker: "Masker"
) -> dict[str, Any]:
    """A host call as a test run lists it (arguments masked and cut short)."""
    shown = orjson.dumps(
        {"args": args, "kwargs": kwargs}, default=str, option=orjson.OPT_NON_STR_KEYS
    ).decode()
    if len(shown) > 500:
        shown = shown[:500] + "…"
    return {"function": name, "arguments": masker.mask(shown), "at": time.time()}
