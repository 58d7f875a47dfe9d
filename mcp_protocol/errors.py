"""JSON-RPC and MCP error codes, and the exceptions that carry them."""

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Implementation-defined server errors (JSON-RPC reserves -32000..-32099 for them):
SERVER_ERROR = (
    -32000
)  # a refusal with no more specific code (rate limit, stream limit, bad request)
SESSION_NOT_FOUND = -32001  # session era: an unknown or expired Mcp-Session-Id
RESOURCE_NOT_FOUND = -32002  # session era only; 2026-07-28 uses INVALID_PARAMS
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
URL_ELICITATION_REQUIRED = -32042


class McpError(Exception):
    """An error answered as a JSON-RPC error object. `http_status` matters on the stateless path."""

    def __init__(self, code: int, message: str, data: Any = None, http_status: int = 200) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status
        # The id of the message the error is about, when parsing got that far.
        self.request_id = None

    def to_dict(self) -> dict[str, Any]:
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def invalid_params(message: str, data: Any = None) -> McpError:
    return McpError(INVALID_PARAMS, message, data)


def method_not_found(method: str) -> McpError:
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method}")


class ToolError(Exception):
    """A failure the model should see: answered as a result with `isError: true`."""

    def __init__(self, message: str, structured_content: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.structured_content = structured_content


class Cancelled(Exception):
    """The client cancelled the request; no response is sent for it."""


class InputRequired(Exception):
    """Stateless era (MRTR): the call needs answers from the client before it can go on."""

    def __init__(self, input_requests: dict[str, Any], request_state: str | None = None) -> None:
        super().__init__("input required")
        self.input_requests = input_requests
        self.request_state = request_state
