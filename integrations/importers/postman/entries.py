"""Reading Postman's own shapes: a description (text or `{content}`) and the enabled entries of
a key/value list."""


def description(value) -> str:
    if isinstance(value, dict):
        value = value.get("content")
    return str(value or "").strip()


def pairs(items) -> list[dict]:
    """Enabled key/value entries of a Postman list (headers, query, urlencoded...)."""
    return [
        item
        for item in items or []
        if isinstance(item, dict) and item.get("key") is not None and not item.get("disabled")
    ]
