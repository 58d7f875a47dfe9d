"""Which arguments of a tool a 2026-07-28 client must also send as `Mcp-Param-*` headers: the
top-level input-schema properties marked with `x-mcp-header`. Read once when a tool is compiled,
so a call looks the pairs up instead of walking the schema."""

from typing import Any

HEADER_PREFIX = "mcp-param-"

# (argument name, lowercased header name) pairs; most tools have none.
HeaderParameters = tuple[tuple[str, str], ...]


def header_parameters(input_schema: Any) -> HeaderParameters:
    """(property, header name) of every top-level property marked with `x-mcp-header`."""
    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    if not isinstance(properties, dict):
        return ()
    found = []
    for name, schema in properties.items():
        token = schema.get("x-mcp-header") if isinstance(schema, dict) else None
        if isinstance(token, str) and token:
            found.append((name, f"{HEADER_PREFIX}{token.lower()}"))
    return tuple(found)
