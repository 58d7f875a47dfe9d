"""What `main` returned, as a CallToolResult.

- a string: one text block;
- a dict shaped like a result (`content` a list of blocks, and only `structuredContent` and
  `isError` besides): used as it is, its blocks checked;
- any other dict: structuredContent (checked against the outputSchema when the tool has one),
  with its JSON as the text block for clients that ignore structuredContent;
- anything else (list, number, bool): its JSON as text, or, when the tool has an outputSchema,
  an error (structuredContent must be an object);
- None: an empty text block.
"""

from typing import TYPE_CHECKING, Any

import orjson

from mcp_protocol.errors import ToolError

from ..static import validate_content_blocks

if TYPE_CHECKING:
    from vault.masking import Masker

RESULT_KEYS = frozenset({"content", "structuredContent", "isError"})


def _json(value: Any) -> str:
    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


def _is_result(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("content"), list)
        and set(value) <= RESULT_KEYS
    )


def to_result(
    value: Any, *, has_output_schema: bool, masker: "Masker", max_bytes: int
) -> dict[str, Any]:
    if _is_result(value):
        problems = validate_content_blocks(value["content"], "content")
        if problems:
            raise ToolError(
                "main returned content blocks that are not valid: " + "; ".join(problems)
            )
        result = {"content": value["content"]}
        if "structuredContent" in value:
            result["structuredContent"] = value["structuredContent"]
        if value.get("isError"):
            result["isError"] = True
    elif isinstance(value, str):
        result = {"content": [{"type": "text", "text": value}]}
    elif value is None:
        result = {"content": [{"type": "text", "text": ""}]}
    elif isinstance(value, dict):
        text = _json(value)
        result = {
            "content": [{"type": "text", "text": text}],
            "structuredContent": orjson.loads(text),
        }
    elif has_output_schema:
        raise ToolError(
            f"main returned a {type(value).__name__}, but the tool's outputSchema needs a dict "
            "(structuredContent is an object)"
        )
    else:
        result = {"content": [{"type": "text", "text": _json(value)}]}
    size = len(_json(result))
    if size > max_bytes:
        raise ToolError(
            f"The code tool was stopped: output limit exceeded ({size} bytes returned, "
            f"at most {max_bytes})."
        )
    masked: dict[str, Any] = masker.mask_data(result)
    return masked
