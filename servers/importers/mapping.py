"""The `http` tool kind's config, built from what an importer found.

Kept in one place so that when the kind's config format moves, only this module follows it.
"""

from .preview import Argument


def http_config(
    *,
    method: str,
    url: str,
    arguments: list[Argument],
    auth: list[dict] | None = None,
    headers: dict | None = None,
    body_type: str | None = None,
) -> dict:
    """`url` keeps `{name}` placeholders for path arguments, named by the argument."""
    config: dict = {"method": method.upper(), "url": url}
    mapping = {}
    for arg in arguments:
        entry: dict = {"in": arg.location}
        if arg.wire_name is not None:  # None: the argument is the whole body
            entry["name"] = arg.wire_name
        mapping[arg.name] = entry
    if mapping:
        config["arguments"] = mapping
    if headers:
        config["headers"] = dict(headers)
    if body_type:
        config["bodyType"] = body_type
    if auth:
        config["auth"] = auth[0] if len(auth) == 1 else {"type": "multiple", "items": auth}
    return config
