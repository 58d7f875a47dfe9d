"""Exposing a chosen subset of an upstream's tools, prompts or resources as rows of a server.

The dashboard's "Add from an upstream server" page and the API's `from-upstream` actions call
these; a person first sees what the upstream offers (discover), then picks. Every new row is
placed after the server's others under the server's lock (servers/parts.py), and an added
tool list becomes the baseline that later refreshes compare against (pinning.py).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

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


@dataclass(frozen=True)
class _Part:
    """What differs between adding tools, prompts and resources, beyond building the row."""

    related: str  # the server's rows of this part: "tools", "prompts" or "resources"
    key: str  # the field that must stay unique on the server: a name, or a resource's uri
    what: str  # one such item, in messages
    problem: Callable[[object], str | None]  # why a new key (an override's) may not be used
    advice: str  # what to do about a key the server already has


def _tool_name_problem(name: object) -> str | None:
    if not isinstance(name, str) or not re.match(TOOL_NAME_RE, name):
        return "is not a valid tool name"
    return None


def _prompt_name_problem(name: object) -> str | None:
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        return "is not a valid name"
    return None


def _uri_problem(uri: object) -> str | None:
    if not isinstance(uri, str) or ":" not in uri or len(uri) > 2000:
        return "is not an absolute URI"
    return None


_TOOLS = _Part("tools", "name", "tool", _tool_name_problem, "rename it")
_PROMPTS = _Part("prompts", "name", "prompt", _prompt_name_problem, "rename it")
_RESOURCES = _Part("resources", "uri", "resource", _uri_problem, "give it another uri")


def _chosen(part: _Part, offered: dict, selected, overrides: dict) -> list[str]:
    names = list(offered) if selected is None else list(selected)
    unknown = [n for n in names if n not in offered]
    if unknown:
        raise UpstreamError(
            f"selected: the upstream has no {part.what} {', '.join(map(repr, unknown))}"
        )
    unknown = [n for n in overrides if n not in names]
    if unknown:
        raise UpstreamError(f"overrides: {', '.join(map(repr, unknown))} is not selected")
    return names


def _add_rows(
    server: Server, part: _Part, offered: dict, selected, overrides, build: Callable
) -> list:
    """Create one row per chosen upstream item (`selected` of `offered`; all when None) under
    the server's lock, its key and other fields as `overrides` (by upstream key) say.
    `build(item, override, upstream key, new key, position)` makes the row."""
    overrides = overrides or {}
    names = _chosen(part, offered, selected, overrides)
    created = []
    with transaction.atomic():
        parts.server_lock(server=server)
        rows = getattr(server, part.related)
        taken = set(rows.values_list(part.key, flat=True))
        positions = parts.part_positions(server=server, related=part.related)
        for upstream_key in names:
            item, override = offered[upstream_key], overrides.get(upstream_key, {})
            new_key = override.get(part.key, upstream_key)
            where = f"overrides.{upstream_key}.{part.key}"
            problem = part.problem(new_key)
            if problem:
                raise UpstreamError(f"{where}: {new_key!r} {problem}")
            if new_key in taken:
                raise UpstreamError(
                    f"{where}: the server already has a {part.what} {new_key!r}; {part.advice}"
                )
            taken.add(new_key)
            created.append(build(item, override, upstream_key, new_key, next(positions)))
    return created


def _shared_fields(
    server: Server, item: dict, override: dict, position: int, *, undescribed: str = "", **own
) -> dict:
    """The fields every added row sets alike (the description `undescribed` when neither the
    override nor the upstream gives one), with the part's `own` ones."""
    return {
        "server": server,
        "title": str(override.get("title", item.get("title") or ""))[:200],
        "description": override.get("description", item.get("description") or undescribed),
        "kind": "upstream",
        "position": position,
        **own,
    }


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
    offered = {t["name"]: t for t in discover(server, url, transport, headers)}

    def build(tool, override, upstream_name, name, position):
        # Tool.description may not be blank: the upstream's name stands in for a missing one.
        fields = _shared_fields(
            server, tool, override, position, undescribed=upstream_name, name=name, enabled=enabled
        )
        return Tool.objects.create(
            **fields,
            input_schema=tool.get("inputSchema") or {"type": "object"},
            output_schema=tool.get("outputSchema"),
            annotations=override.get("annotations", tool.get("annotations") or {}),
            config={
                **connection_config(url, transport, headers),
                "tool": upstream_name,
                "synced": synced_fields(tool),
            },
        )

    with transaction.atomic():
        created = _add_rows(server, _TOOLS, offered, selected, overrides, build)
        pinning.remember(server, url, offered)  # what a person saw and chose from: the baseline
    return created


def _prompt_row(server, prompt, override, upstream_name, name, position, connection) -> Prompt:
    return Prompt.objects.create(
        **_shared_fields(server, prompt, override, position, name=name),
        arguments=prompt.get("arguments") or [],
        icons=prompt.get("icons") or [],
        config={**connection, "prompt": upstream_name},
    )


def _resource_row(server, resource, override, upstream_uri, uri, position, connection) -> Resource:
    return Resource.objects.create(
        **_shared_fields(server, resource, override, position, uri=uri),
        name=str(override.get("name", resource.get("name") or uri))[:200],
        mime_type=str(resource.get("mimeType") or "")[:200],
        annotations=resource.get("annotations") or {},
        icons=resource.get("icons") or [],
        config={**connection, "uri": upstream_uri},
    )


# The parts add_upstream_items adds, and how each makes its row.
_LISTED = {"prompts": (_PROMPTS, _prompt_row), "resources": (_RESOURCES, _resource_row)}


def add_upstream_items(
    server: Server,
    url: str,
    *,
    part: str,
    transport: str = DEFAULT_TRANSPORT,
    headers: dict | None = None,
    selected: list[str] | None = None,
    overrides: dict[str, dict] | None = None,
) -> list:
    """Expose the `selected` prompts or resources (`part`) of an upstream (all it lists when
    None; resources by uri) as `upstream` prompts or resources of `server`. `overrides` maps an
    upstream prompt name to {name, title, description}, an upstream uri to {uri, name, title,
    description}."""
    listed, row = _LISTED[part]
    offered = _offered(server, url, transport, headers, f"list_{part}", listed.key)

    def build(item, override, upstream_key, new_key, position):
        connection = connection_config(url, transport, headers)
        return row(server, item, override, upstream_key, new_key, position, connection)

    return _add_rows(server, listed, offered, selected, overrides, build)


add_upstream_prompts = partial(add_upstream_items, part="prompts")
add_upstream_resources = partial(add_upstream_items, part="resources")

ADDERS = {
    "tools": add_upstream_tools,
    "prompts": add_upstream_prompts,
    "resources": add_upstream_resources,
}
