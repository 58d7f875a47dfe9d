"""Postgres cannot store NUL characters, and UTF-8 cannot encode lone surrogates: input that
carries either is refused up front instead of failing at the database."""

from rest_framework import serializers
from rest_framework.request import Request

_SURROGATES = range(0xD800, 0xE000)


def storable(text: str) -> bool:
    return "\x00" not in text and not any(ord(ch) in _SURROGATES for ch in text)


def check_json(value, path: str = "") -> None:
    """Raises ValidationError naming the first key or string that cannot be stored."""
    if isinstance(value, str):
        if not storable(value):
            raise serializers.ValidationError(
                f"{path + ': ' if path else ''}contains a NUL or unpaired surrogate character"
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            check_json(key, path)
            check_json(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_json(item, f"{path}[{i}]")
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
        raise serializers.ValidationError(f"{path + ': ' if path else ''}integer out of range")


def query_text(request: Request, name: str) -> str | None:
    value = request.query_params.get(name) or None
    if value is not None and not storable(value):
        raise serializers.ValidationError(
            {name: ["contains a NUL or unpaired surrogate character"]}
        )
    return value
