"""JSON-RPC 2.0 messages: parsing a POST body into typed messages, and encoding replies."""

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import orjson

from .errors import INVALID_REQUEST, PARSE_ERROR, McpError
from .limits import MAX_JSON_DEPTH, depth_exceeds

# A JSON-RPC id: the answer carries the same value with the same type.
RequestId = str | int

NO_ID = object()  # an error about a message whose id we could not read


@dataclass(frozen=True, slots=True)
class Request:
    id: str | int
    method: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Response:
    """A client's answer to a request the server sent it (result or error)."""

    id: str | int
    result: Any = None
    error: dict[str, Any] | None = None


Message = Request | Notification | Response


def parse_body(body: bytes) -> Message | list[Message]:
    """Parse a POST body. Raises McpError(-32700) for bad JSON, (-32600) for a bad message."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise McpError(PARSE_ERROR, f"Parse error: {exc}", http_status=400) from None
    # +1: a batch is one level more. Every list or object opens with its own bracket, so a body
    # with no more brackets than the limit cannot nest deeper (strings only add brackets): the
    # count, in C, spares the walk for almost every message.
    shallow = body.count(b"{") + body.count(b"[") <= MAX_JSON_DEPTH + 1
    if not shallow and depth_exceeds(data, MAX_JSON_DEPTH + 1):
        raise _too_deep(data)
    if isinstance(data, list):
        if not data:
            raise McpError(INVALID_REQUEST, "Invalid Request: empty batch", http_status=400)
        return [parse_message(item) for item in data]
    return parse_message(data)


def _too_deep(data: Any) -> McpError:
    err = McpError(
        INVALID_REQUEST,
        f"Invalid Request: JSON nested deeper than {MAX_JSON_DEPTH} levels",
        http_status=400,
    )
    message_id = data.get("id") if isinstance(data, dict) else None
    err.request_id = message_id if _valid_id(message_id) else None
    return err


def _valid_id(value: object) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def parse_message(data: Any) -> Message:
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        raise McpError(
            INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", http_status=400
        )
    if "method" in data:
        method = data["method"]
        params = data.get("params", {})
        if params is None:
            params = {}
        if not isinstance(method, str) or not method:
            raise _invalid(data, "method must be a non-empty string")
        if not isinstance(params, dict):
            raise _invalid(data, "params must be an object")
        if "id" not in data:
            return Notification(method, params)
        if not _valid_id(data["id"]):
            raise McpError(
                INVALID_REQUEST,
                "Invalid Request: id must be a string or an integer",
                http_status=400,
            )
        return Request(data["id"], method, params)
    if "id" in data and ("result" in data or "error" in data):
        if not _valid_id(data["id"]):
            raise McpError(INVALID_REQUEST, "Invalid Request: bad response id", http_status=400)
        error = data.get("error")
        if error is not None and not isinstance(error, dict):
            raise _invalid(data, "error must be an object")
        return Response(data["id"], data.get("result"), error)
    raise _invalid(data, "neither a request, a notification nor a response")


def _invalid(data: dict[str, Any], why: str) -> McpError:
    err = McpError(INVALID_REQUEST, f"Invalid Request: {why}", http_status=400)
    message_id = data.get("id")
    err.request_id = message_id if _valid_id(message_id) else None
    return err


def result_message(request_id: RequestId | None, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_message(request_id: RequestId | None, error: McpError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_dict()}


def request_message(request_id: RequestId, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def notification_message(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def _frozen(value: object) -> dict[str, Any]:
    # Snapshots keep their data in read-only mappings; they serialize like dicts.
    if isinstance(value, MappingProxyType):
        return dict(value)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def dumps(message: Any) -> bytes:
    return orjson.dumps(message, default=_frozen)
