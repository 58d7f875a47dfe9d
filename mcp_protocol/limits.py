"""Structural limits on JSON data that comes from tenants and callers: nesting depth and size.

Everything that walks tenant data recursively (validators, redaction, logging, templating) is
safe once the data is known to be shallow, so the limit is checked once, where data comes in,
with an explicit stack instead of recursion.
"""

from collections.abc import Iterable
from typing import Any

# Deeper than any MCP message, schema or definition a person writes; shallow enough that every
# recursive walk over it stays far from Python's recursion limit.
MAX_JSON_DEPTH = 64


def depth_exceeds(value: object, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether lists and objects in `value` nest more than `limit` levels deep."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
