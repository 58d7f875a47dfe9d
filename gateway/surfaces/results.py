"""Turning a CallToolResult into the plain value REST and Webtools callers get."""


def text_of(result: dict) -> str:
    return "\n".join(
        block.get("text", "")
        for block in result.get("content") or []
        if block.get("type") == "text"
    )


def all_text(result: dict) -> bool:
    return all(block.get("type") == "text" for block in result.get("content") or [])


def plain_value(tool, result: dict):
    """structuredContent for a tool that declares an outputSchema; otherwise the text when the
    result is only text, else the content blocks."""
    if tool.output_validator is not None:
        return result.get("structuredContent")
    if all_text(result):
        return text_of(result)
    return result.get("content") or []


# The JSON Schema of plain_value for a tool without an outputSchema.
UNSTRUCTURED_VALUE = {
    "oneOf": [
        {"type": "string", "description": "The text the tool returned."},
        {
            "type": "array",
            "description": "The tool's content blocks (MCP ContentBlock objects).",
            "items": {"type": "object", "required": ["type"]},
        },
    ]
}


def value_schema(tool) -> dict:
    return tool.wire["outputSchema"] if tool.output_validator is not None else UNSTRUCTURED_VALUE
