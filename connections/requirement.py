"""What a tool declares it needs: `connection: {provider, scopes, in, name, prefix}` on an http
tool, `connections: [provider, {provider, scopes}]` on a code tool. Pure data and its checks:
the tool kinds compile it into their snapshot, so a call knows without a query whether it needs
a token at all."""

import re
from dataclasses import dataclass
from typing import Any

FIELDS = frozenset({"provider", "scopes", "in", "name", "prefix"})
_KEY = re.compile(r"[a-z0-9_-]{1,50}")


@dataclass(frozen=True)
class Requirement:
    provider: str
    scopes: tuple[str, ...] = ()
    location: str = "header"  # header | query
    name: str = "Authorization"
    prefix: str = "Bearer "


def validate(connection: Any, path: str) -> list[str]:
    """Problems of one declared connection, each naming its field from `path` on."""
    if isinstance(connection, str):
        connection = {"provider": connection}
    if not isinstance(connection, dict):
        return [f"{path}: must be a provider name or a mapping with provider"]
    errors = [f"{path}.{key}: unknown field" for key in sorted(set(connection) - FIELDS)]
    provider = connection.get("provider")
    if not isinstance(provider, str) or not _KEY.fullmatch(provider):
        errors.append(f"{path}.provider: must be a provider key (lower-case letters, digits, - _)")
    scopes = connection.get("scopes", [])
    if not isinstance(scopes, list) or not all(isinstance(x, str) and x for x in scopes):
        errors.append(f"{path}.scopes: must be a list of scope names")
    if connection.get("in", "header") not in ("header", "query"):
        errors.append(f"{path}.in: must be header or query")
    for key in ("name", "prefix"):
        if key in connection and not isinstance(connection[key], str):
            errors.append(f"{path}.{key}: must be a string")
    return errors


def requirement_of(spec: Any) -> Requirement:
    """A validated declaration, compiled."""
    if isinstance(spec, str):
        spec = {"provider": spec}
    location = spec.get("in", "header")
    return Requirement(
        provider=spec["provider"],
        scopes=tuple(spec.get("scopes") or ()),
        location=location,
        name=spec.get("name", "Authorization" if location == "header" else "access_token"),
        prefix=spec.get("prefix", "Bearer " if location == "header" else ""),
    )
