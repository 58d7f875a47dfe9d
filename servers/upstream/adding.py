"""Exposing a chosen subset of an upstream's tools, prompts or resources as rows of a server.

The dashboard's "Add from an upstream server" page and the API's `from-upstream` actions call
these; a person first sees what the upstream offers (discover), then picks. Every new row is
placed after the server's others under the server's lock (servers/parts.py), and an added
tool list becomes the baseline that later refreshes compare against (pinning.py).
"""

from collections.abc import Callable

from asgiref.sync import async_to_sync
from django.db import transaction

from .. import parts
from ..models import TOOL_NAME_RE, Prompt, Resource, Server, Tool
from . import pinning
from .target import (
    DEFAULT_TRANSPORT,
    UpstreamError,
    check_target,
    connection_config,
    fetch_tools,
    synced_fields,
    upstream_of,
)

# What each part can be added as, by the API's and the dashboard's name for it.
KINDS = ("tools", "prompts", "resources")


def discover(
    server: Server, url: str, transport: str = DEFAULT_TRANSPORT, headers=None
) -> list[dict]:
    """What an upstream offers, for a person choosing which tools to expose."""
    check_target(url, transport, headers)
    return fetch_tools(upstream_of(server, url, transport, headers))


def discover_part(
    server: Server, part: str, url: str, transport: str = DEFAULT_TRANSPORT, headers=None
) -> list[dict]:
    """What an upstream offers of `part` (one of KINDS)."""
    if part == "tools":
        return discover(server, url, transport, headers)
    key = "name" if part == "prompts" else "uri"
    return list(_offered(server, url, transport, headers, f"list_{part}", key).values())


def _offered(server: Server, url: str, transport: str, headers, list_items, key: str) -> dict:
    from . import relay

    check_target(url, transport, headers)
    upstream = upstream_of(server, url, transport, headers)
    return {item[key]: item for item in async_to_sync(getattr(relay, list_items))(upstream)}


def _chosen(offered: dict, selected, overrides, what: str) -> list[str]:
    names = list(offered) if selected is None else list(selected)
    unknown = [n for n in names if n not in offered]
    if unknown:
        raise UpstreamError(f"selected: the upstream has no {what} {', '.join(map(repr, unknown))}")
    unknown = [n for n in overrides if n not in names]
    if unknown:
        raise UpstreamError(f"overrides: {', '.join(map(repr, unknown))} is not selected")
    return names


def _add_rows(
    server: Server,
    related: str,
    key: str,
    names: list[str],
    offered: dict,
    overrides: dict,
    check: Callable,
    build: Callable,
) -> list:
    """Create one row per chosen upstream item under the server's lock. `key` is the field
    that must stay unique on the server (a tool's or prompt's name, a resource's uri);
    `check(upstream key, new key, taken)` refuses a bad one; `build(item, override, upstream
    key, new key, position)` makes the row."""
    created = []
    with transaction.atomic():
        parts.server_lock(server=server)
        rows = getattr(server, related)
        taken = set(rows.values_list(key, flat=True))
        positions = parts.part_positions(server=server, related=related)
        for upstream_key in names:
            item, override = offered[upstream_key], overrides.get(upstream_key, {})
            new_key = override.get(key, upstream_key)
            check(upstream_key, new_key, taken)
            taken.add(new_key)
            created.append(build(item, override, upstream_key, new_key, next(positions)))
    return created


def add_upstream_tools(
    server: Server,
    url: str,
    *,
    transport: str = DEFAULT_TRANSPORT,
    headers: dict | None = None,
    selected: list[str] | None = None,
    overrides: dict[str, dict] | None = None,
    enabled: bool = True,
) -> list[Tool]:
    """Expose the `selected` tools of an upstream (all when None) as `upstream` tools of `server`.

    `overrides` maps an upstream tool name to {name, title, description, annotations} to use
    here instead of the upstream's own.
    """
    import re

    offered = {t["name"]: t for t in discover(server, url, transport, headers)}
    overrides = overrides or {}
    names = _chosen(offered, selected, overrides, "tool")

    def check(upstream_name, name, taken):
        if not isinstance(name, str) or not re.match(TOOL_NAME_RE, name):
            raise UpstreamError(
                f"overrides.{upstream_name}.name: {name!r} is not a valid tool name"
            )
        if name in taken:
            raise UpstreamError(
                f"overrides.{upstream_name}.name: the server already has a tool {name!r}; rename it"
            )

    def build(tool, override, upstream_name, name, position):
        return Tool.objects.create(
            server=server,
            name=name,
            title=str(override.get("title", tool.get("title") or ""))[:200],
            description=override.get("description", tool.get("description") or upstream_name),
            input_schema=tool.get("inputSchema") or {"type": "object"},
            output_schema=tool.get("outputSchema"),
            annotations=override.get("annotations", tool.get("annotations") or {}),
            kind="upstream",
            config={
                **connection_config(url, transport, headers),
                "tool": upstream_name,
                "synced": synced_fields(tool),
            },
            enabled=enabled,
            position=position,
        )

    with transaction.atomic():
        created = _add_rows(server, "tools", "name", names, offered, overrides, check, build)
        pinning.remember(server, url, offered)  # what a person saw and chose from: the baseline
    return created


def add_upstream_prompts(
    server: Server,
    url: str,
    *,
    transport: str = DEFAULT_TRANSPORT,
    headers: dict | None = None,
    selected: list[str] | None = None,
    overrides: dict[str, dict] | None = None,
) -> list[Prompt]:
    """Expose the `selected` prompts of an upstream (all when None) as `upstream` prompts of
    `server`. `overrides` maps an upstream prompt name to {name, title, description}."""
    offered = _offered(server, url, transport, headers, "list_prompts", "name")
    overrides = overrides or {}
    names = _chosen(offered, selected, overrides, "prompt")

    def check(upstream_name, name, taken):
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            raise UpstreamError(f"overrides.{upstream_name}.name: {name!r} is not a valid name")
        if name in taken:
            raise UpstreamError(
                f"overrides.{upstream_name}.name: the server already has a prompt {name!r}; "
                "rename it"
            )

    def build(prompt, override, upstream_name, name, position):
        return Prompt.objects.create(
            server=server,
            name=name,
            title=str(override.get("title", prompt.get("title") or ""))[:200],
            description=override.get("description", prompt.get("description") or ""),
            arguments=prompt.get("arguments") or [],
            icons=prompt.get("icons") or [],
            kind="upstream",
            config={**connection_config(url, transport, headers), "prompt": upstream_name},
            position=position,
        )

    return _add_rows(server, "prompts", "name", names, offered, overrides, check, build)


def add_upstream_resources(
    server: Server,
    url: str,
    *,
    transport: str = DEFAULT_TRANSPORT,
    headers: dict | None = None,
    selected: list[str] | None = None,
    overrides: dict[str, dict] | None = None,
) -> list[Resource]:
    """Expose the `selected` resources of an upstream (by uri; all its listed resources when
    None) as `upstream` resources of `server`. `overrides` maps an upstream uri to
    {uri, name, title, description}."""
    offered = _offered(server, url, transport, headers, "list_resources", "uri")
    overrides = overrides or {}
    uris = _chosen(offered, selected, overrides, "resource")

    def check(upstream_uri, uri, taken):
        if not isinstance(uri, str) or ":" not in uri or len(uri) > 2000:
            raise UpstreamError(f"overrides.{upstream_uri}.uri: {uri!r} is not an absolute URI")
        if uri in taken:
            raise UpstreamError(
                f"overrides.{upstream_uri}.uri: the server already has a resource {uri!r}; "
                "give it another uri"
            )

    def build(resource, override, upstream_uri, uri, position):
        return Resource.objects.create(
            server=server,
            uri=uri,
            name=str(override.get("name", resource.get("name") or uri))[:200],
            title=str(override.get("title", resource.get("title") or ""))[:200],
            description=override.get("description", resource.get("description") or ""),
            mime_type=str(resource.get("mimeType") or "")[:200],
            annotations=resource.get("annotations") or {},
            icons=resource.get("icons") or [],
            kind="upstream",
            config={**connection_config(url, transport, headers), "uri": upstream_uri},
            position=position,
        )

    return _add_rows(server, "resources", "uri", uris, offered, overrides, check, build)


ADDERS = {
    "tools": add_upstream_tools,
    "prompts": add_upstream_prompts,
    "resources": add_upstream_resources,
}
