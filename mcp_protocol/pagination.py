"""Opaque list cursors: a client can only hand back what it was given."""

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from .errors import INVALID_PARAMS, McpError

_PREFIX = "o1:"


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{offset}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int:
    """The offset a cursor stands for; no cursor (or an empty one) is the start of the list."""
    if cursor is None or cursor == "":
        return 0
    if not isinstance(cursor, str) or len(cursor) > 64:
        raise McpError(INVALID_PARAMS, "Invalid cursor")
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise McpError(INVALID_PARAMS, "Invalid cursor") from None
    digits = text[len(_PREFIX) :]
    if not text.startswith(_PREFIX) or not digits.isdigit() or not digits.isascii():
        raise McpError(INVALID_PARAMS, "Invalid cursor")
    return int(digits)


def paginate(
    items: Sequence[Any], cursor: str | None, page_size: int = 50
) -> tuple[list[Any], str | None]:
    """One page of `items` and the cursor of the next page (None when this is the last)."""
    offset = decode_cursor(cursor)
    if offset > len(items):
        raise McpError(INVALID_PARAMS, "Invalid cursor")
    page = list(items[offset : offset + page_size])
    end = offset + page_size
    return page, (encode_cursor(end) if end < len(items) else None)
