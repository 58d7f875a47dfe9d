"""Mapping an upstream response to a CallToolResult: selecting, templating, structured content,
binary bodies, errors; and `call`, the kind's entry point."""

import base64
from typing import TYPE_CHECKING, Any

import jmespath
import jmespath.exceptions
import orjson

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import ToolError
from servers.outbound import GuardedResponse

from ...templating import render_text
from .compiling import HttpTool
from .config import ERROR_EXCERPT
from .sending import _is_json, _is_textual, fetch

if TYPE_CHECKING:
    from vault.masking import Masker

# -- the response ---------------------------------------------------------------------------------

STATUS_HINTS = {
    400: "the API rejected the request; check the arguments",
    401: "the API did not accept the credentials configured for this tool",
    403: "the credentials configured for this tool are not allowed to do this",
    404: "the API found nothing at this address; check the arguments",
    405: "the API does not allow this method here",
    408: "the API timed out waiting for the request",
    409: "the request conflicts with the current state of the resource",
    413: "the request is too large for the API",
    422: "the API could not process the arguments",
    429: "the API is rate limiting requests; try again later",
}


def upstream_error(response: GuardedResponse, masker: "Masker") -> ToolError:
    status = response.status_code
    hint = STATUS_HINTS.get(status) or (
        "the API failed; try again later" if status >= 500 else "the API refused the request"
    )
    message = f"The upstream API answered {status} {response.reason_phrase}: {hint}."
    if response.content and _is_textual(response.content_type):
        excerpt = response.text.strip()
        if len(excerpt) > ERROR_EXCERPT:
            excerpt = excerpt[:ERROR_EXCERPT] + "…"
        message += f" Response: {excerpt}"
    return ToolError(masker.mask(message))


def _truncation_note(tool: HttpTool) -> str:
    return (
        f"\n\n[Truncated: the response was larger than {tool.max_bytes} bytes; only the first "
        f"{tool.max_bytes} bytes are shown.]"
    )


def build_result(
    tool: HttpTool, response: GuardedResponse, arguments: dict[str, Any], masker: "Masker"
) -> dict[str, Any]:
    """The CallToolResult for a response (raises ToolError for upstream errors)."""
    if response.status_code >= 400:
        raise upstream_error(response, masker)
    if 300 <= response.status_code < 400:
        raise ToolError(
            f"The upstream API answered {response.status_code} (a redirect that was not followed)."
        )
    content_type = response.content_type
    if tool.method == "HEAD" and tool.render_template is None:
        return {"content": [{"type": "text", "text": masker.mask(_head_summary(response))}]}
    if not _is_textual(content_type):
        return _binary_result(tool, response, content_type)
    text = response.text
    if response.truncated:
        return {"content": [{"type": "text", "text": masker.mask(text) + _truncation_note(tool)}]}
    parsed, data = _parsed(tool, response, content_type, text)
    text_out = _text_out(tool, response, arguments, parsed, data, text)
    result: dict[str, Any] = {"content": [{"type": "text", "text": masker.mask(text_out)}]}
    if tool.structured and parsed:
        result["structuredContent"] = _structured(tool, data, masker)
    return result


def _parsed(
    tool: HttpTool, response: GuardedResponse, content_type: str, text: str
) -> tuple[bool, Any]:
    """(True, the JSON body, through the tool's selector) or (False, the text)."""
    if not (_is_json(content_type) or (not content_type and text.lstrip()[:1] in ("{", "["))):
        return False, text
    try:
        data = orjson.loads(response.content) if response.content else None
    except orjson.JSONDecodeError:
        if _is_json(content_type):
            raise ToolError("The upstream API sent invalid JSON.") from None
        return False, text
    if tool.select is not None:
        try:
            data = tool.select.search(data)
        except jmespath.exceptions.JMESPathError as exc:
            raise ToolError(f"The response selector failed: {exc}") from None
    return True, data


def _text_out(
    tool: HttpTool,
    response: GuardedResponse,
    arguments: dict[str, Any],
    parsed: bool,
    data: Any,
    text: str,
) -> str:
    """The result's text: the tool's template rendered, else the JSON, else the body as sent."""
    if tool.render_template is not None:
        rendered = tool.render_template(
            {
                "response": data,
                "status": response.status_code,
                "headers": {k.lower(): v for k, v in response.headers.items()},
                "args": arguments,
            }
        )
        text_out = render_text(rendered)
    elif parsed:
        text_out = "" if data is None else orjson.dumps(data).decode()
    else:
        text_out = text
    if not text_out and response.status_code == 204:
        text_out = "(no content: the upstream API answered 204)"
    return text_out


def _structured(tool: HttpTool, data: Any, masker: "Masker") -> dict[str, Any]:
    structured: dict[str, Any] = masker.mask_data(
        data if isinstance(data, dict) else {"result": data}
    )
    if tool.output_validator is not None:
        error = next(iter(tool.output_validator.iter_errors(structured)), None)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            raise ToolError(
                f"The upstream response does not match the tool's outputSchema at {where}: "
                f"{error.message}"
            )
    return structured


HEAD_HEADERS = ("content-type", "content-length", "last-modified", "etag", "cache-control")


def _head_summary(response: GuardedResponse) -> str:
    lines = [f"{response.status_code} {response.reason_phrase}"]
    lines += [
        f"{name}: {response.headers[name]}" for name in HEAD_HEADERS if name in response.headers
    ]
    return "\n".join(lines)


def _binary_result(tool: HttpTool, response: GuardedResponse, content_type: str) -> dict[str, Any]:
    if response.truncated:
        raise ToolError(
            f"The upstream API sent a {content_type or 'binary'} body larger than the "
            f"{tool.max_bytes}-byte limit of this tool."
        )
    data = base64.b64encode(response.content).decode()
    if content_type.startswith("image/"):
        return {"content": [{"type": "image", "data": data, "mimeType": content_type}]}
    if content_type.startswith("audio/"):
        return {"content": [{"type": "audio", "data": data, "mimeType": content_type}]}
    resource = {"uri": response.url, "blob": data}
    if content_type:
        resource["mimeType"] = content_type
    return {"content": [{"type": "resource", "resource": resource}]}


async def call(
    compiled: HttpTool, arguments: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    arguments = dict(arguments or {})
    response, masker = await fetch(compiled, arguments, arguments, ctx)
    return build_result(compiled, response, arguments, masker)
