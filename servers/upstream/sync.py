"""Listing an upstream's tools, exposing a chosen subset, and keeping them in step with it.

A server's upstreams are not rows of their own: they are the distinct (url, transport,
headers) of its `upstream` tools. Each such tool row keeps, in `config.synced`, what the
upstream said about it at the last refresh, so a refresh can tell a description the owner
rewrote (kept) from one the upstream changed (followed). Input and output schemas always
follow the upstream: it is the upstream that validates the arguments.
"""

import asyncio
import logging
from dataclasses import dataclass, field

import orjson
from asgiref.sync import async_to_sync
from django.db import transaction

from .. import parts
from ..models import TOOL_NAME_RE, Prompt, Resource, Server, Tool
from . import health, pinning
from .config import SECRET_REFERENCE, validate_connection
from .connection import Upstream, UpstreamUnreachable, connect, list_tools

logger = logging.getLogger(__name__)


class UpstreamError(ValueError):
    """A request to add upstream tools that cannot be done; the message names the field."""


@dataclass
class UpstreamReport:
    url: str
    transport: str
    status: str = "ok"  # ok | unreachable
    error: str | None = None
    updated: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    available: list[str] = field(default_factory=list)  # upstream tools not exposed here
    held: list[str] = field(default_factory=list)  # changed or new, waiting for approval
    added: list[str] = field(default_factory=list)  # new upstream tools exposed (auto-approve)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _render_headers(
    server: Server | None, headers: dict
) -> tuple[tuple[str, str], tuple[str, ...]]:
    from ..templating import compile_value, render_text

    text = " ".join(str(v) for v in headers.values())
    names = {a or b for a, b in SECRET_REFERENCE.findall(text)}
    values: dict = {}
    if names and server is not None:
        from vault.resolve import secrets_for

        values = dict(secrets_for(server.organization_id, server.pk))
    missing = sorted(names - set(values))
    if missing:
        raise UpstreamError(f"headers: the secret(s) {', '.join(missing)} are not set in the vault")
    rendered = compile_value(headers)({"secrets": values})
    pairs = tuple((str(k), render_text(v)) for k, v in rendered.items() if v not in (None, ""))
    return pairs, tuple(values[n] for n in names)


def upstream_of(
    server: Server | None,
    url: str,
    transport: str = "streamable-http",
    headers=None,
    timeout: float = 30.0,
) -> Upstream:
    pairs, secrets = _render_headers(server, headers or {})
    return Upstream(
        url=url,
        transport=transport,
        headers=pairs,
        organization_id=server.organization_id if server else None,
        server_id=server.pk if server else None,
        timeout=timeout,
        secret_values=secrets,
    )


async def afetch_tools(upstream: Upstream) -> list[dict]:
    """The upstream's tools; records its health either way. UpstreamUnreachable if it is down."""
    try:
        async with asyncio.timeout(upstream.timeout):
            async with connect(upstream) as client:
                tools = await list_tools(client)
    except UpstreamUnreachable as exc:
        await health.arecord(upstream.server_id, upstream.url, ok=False, error=exc.reason)
        raise
    except Exception as exc:
        from .connection import describe

        reason = describe(exc, upstream)
        await health.arecord(upstream.server_id, upstream.url, ok=False, error=reason)
        raise UpstreamUnreachable(reason) from None
    await health.arecord(upstream.server_id, upstream.url, ok=True)
    return tools


def fetch_tools(upstream: Upstream) -> list[dict]:
    return async_to_sync(afetch_tools)(upstream)


def discover(
    server: Server, url: str, transport: str = "streamable-http", headers=None
) -> list[dict]:
    """What an upstream offers, for a person choosing which tools to expose."""
    _check_target(url, transport, headers)
    return fetch_tools(upstream_of(server, url, transport, headers))


def _check_target(url, transport, headers) -> None:
    errors = validate_connection({"url": url, "transport": transport, "headers": headers or {}})
    if errors:
        raise UpstreamError("; ".join(e.removeprefix("config.") for e in errors))


def _synced(tool: dict) -> dict:
    return {
        key: tool[key]
        for key in ("title", "description", "inputSchema", "outputSchema", "annotations", "icons")
        if key in tool
    }


def add_upstream_tools(
    server: Server,
    url: str,
    *,
    transport: str = "streamable-http",
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

    _check_target(url, transport, headers)
    offered = {t["name"]: t for t in fetch_tools(upstream_of(server, url, transport, headers))}
    names = list(offered) if selected is None else list(selected)
    unknown = [n for n in names if n not in offered]
    if unknown:
        raise UpstreamError(f"selected: the upstream has no tool {', '.join(map(repr, unknown))}")
    overrides = overrides or {}
    unknown = [n for n in overrides if n not in names]
    if unknown:
        raise UpstreamError(f"overrides: {', '.join(map(repr, unknown))} is not selected")
    created = []
    with transaction.atomic():
        parts.server_lock(server=server)
        taken = set(server.tools.values_list("name", flat=True))
        positions = parts.part_positions(server=server, related="tools")
        for upstream_name in names:
            tool = offered[upstream_name]
            override = overrides.get(upstream_name, {})
            name = override.get("name", upstream_name)
            if not isinstance(name, str) or not re.match(TOOL_NAME_RE, name):
                raise UpstreamError(
                    f"overrides.{upstream_name}.name: {name!r} is not a valid tool name"
                )
            if name in taken:
                raise UpstreamError(
                    f"overrides.{upstream_name}.name: the server already has a tool {name!r}; rename it"
                )
            taken.add(name)
            config = {
                "url": url,
                "transport": transport,
                "tool": upstream_name,
                "synced": _synced(tool),
            }
            if headers:
                config["headers"] = dict(headers)
            created.append(
                Tool.objects.create(
                    server=server,
                    name=name,
                    title=str(override.get("title", tool.get("title") or ""))[:200],
                    description=override.get(
                        "description", tool.get("description") or upstream_name
                    ),
                    input_schema=tool.get("inputSchema") or {"type": "object"},
                    output_schema=tool.get("outputSchema"),
                    annotations=override.get("annotations", tool.get("annotations") or {}),
                    kind="upstream",
                    config=config,
                    enabled=enabled,
                    position=next(positions),
                )
            )
        pinning.remember(server, url, offered)  # what a person saw and chose from: the baseline
    return created


def _offered(server: Server, url: str, transport: str, headers, list_items, key: str) -> dict:
    from . import relay

    _check_target(url, transport, headers)
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


def _connection(url: str, transport: str, headers) -> dict:
    config = {"url": url, "transport": transport}
    if headers:
        config["headers"] = dict(headers)
    return config


def _add_rows(server: Server, related: str, key: str, names, offered, overrides, check, build):
    """Create one row per chosen upstream item under the server's lock. `key` is the field
    that must stay unique on the server (a prompt's name, a resource's uri); `check(upstream
    key, new key, taken)` refuses a bad one; `build(item, override, upstream key, new key,
    position)` makes the row."""
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


def add_upstream_prompts(
    server: Server,
    url: str,
    *,
    transport: str = "streamable-http",
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
            config={**_connection(url, transport, headers), "prompt": upstream_name},
            position=position,
        )

    return _add_rows(server, "prompts", "name", names, offered, overrides, check, build)


def add_upstream_resources(
    server: Server,
    url: str,
    *,
    transport: str = "streamable-http",
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
            config={**_connection(url, transport, headers), "uri": upstream_uri},
            position=position,
        )

    return _add_rows(server, "resources", "uri", uris, offered, overrides, check, build)


def _group_key(config: dict) -> tuple:
    return (
        config.get("url"),
        config.get("transport", "streamable-http"),
        orjson.dumps(config.get("headers") or {}, option=orjson.OPT_SORT_KEYS),
    )


def refresh_server(server: Server) -> list[UpstreamReport]:
    """Re-list every upstream of `server` and bring its tool rows in step with what it says."""
    rows = list(server.tools.filter(kind="upstream"))
    groups: dict[tuple, list[Tool]] = {}
    for row in rows:
        groups.setdefault(_group_key(row.config), []).append(row)
    reports = []
    for (url, transport, _headers), members in groups.items():
        report = UpstreamReport(url=url, transport=transport)
        reports.append(report)
        try:
            upstream = upstream_of(server, url, transport, members[0].config.get("headers"))
            offered = {t["name"]: t for t in fetch_tools(upstream)}
        except (UpstreamUnreachable, UpstreamError) as exc:
            report.status = "unreachable"
            report.error = getattr(exc, "reason", None) or str(exc)
            if isinstance(exc, UpstreamError):
                health.record(server.pk, url, ok=False, error=report.error)
            continue
        exposed = {row.config.get("tool") for row in members}
        baseline = pinning.known(server, url)
        # The first sync of a connection is its baseline; after it, changes wait for approval.
        holding = baseline is not None and not server.upstream_auto_approve
        for row in members:
            _apply(row, offered.get(row.config.get("tool")), report, holding=holding)
        if baseline is None:
            pinning.remember(server, url, offered)
        else:
            connection = _connection(url, transport, members[0].config.get("headers"))
            pinning.new_tools(
                server,
                url,
                connection,
                {name: _synced(offered[name]) for name in set(offered) - exposed - baseline},
                report,
            )
        report.available = sorted(set(offered) - exposed - set(report.added))
    return reports


def _apply(row: Tool, offered: dict | None, report: UpstreamReport, holding: bool = False) -> None:
    synced = dict(row.config.get("synced") or {})
    changed = []
    if offered is None:
        if not synced.get("missing"):
            synced["missing"] = True
            synced["disabledByRefresh"] = row.enabled
            row.enabled = False
            changed.append("enabled")
            report.missing.append(row.name)
    else:
        fresh = _synced(offered)
        if synced.get("missing"):
            row.enabled = row.enabled or bool(synced.get("disabledByRefresh"))
            changed.append("enabled")
            report.restored.append(row.name)
        pinned = {k: v for k, v in synced.items() if k not in ("missing", "disabledByRefresh")}
        # A row never synced has no pin yet: what the upstream says now becomes it.
        if holding and pinned and fresh != pinned:
            review = pinning.hold(
                row.server,
                kind="changed",
                url=row.config.get("url"),
                connection=_connection(
                    row.config.get("url"),
                    row.config.get("transport", "streamable-http"),
                    row.config.get("headers"),
                ),
                upstream_name=row.config.get("tool"),
                pending=fresh,
                approved=pinned,
                tool=row,
            )
            if review is not None:
                report.held.append(row.name)
            synced = pinned
        else:
            changed += pinning.follow_fields(row, synced, fresh)
            if fresh != pinned:
                changed.append("config")
                if pinned and row.server.upstream_auto_approve:
                    pinning.auto_approved(
                        row.server,
                        row.config.get("tool"),
                        tool_id=row.pk,
                        before=pinned,
                        after=fresh,
                        kind="changed",
                    )
            synced = fresh
    if changed:
        row.config = {**row.config, "synced": synced}
        row.save(update_fields=sorted({*changed, "config"}))
        if offered is not None and row.name not in report.restored and row.name not in report.held:
            report.updated.append(row.name)


def server_upstreams(server: Server) -> list[dict]:
    """The upstreams a server uses, each with its tools here and its last known health (for the
    dashboard and the API; no network)."""
    summary: dict[tuple, dict] = {}
    for row in server.tools.filter(kind="upstream").order_by("position", "id"):
        key = _group_key(row.config)
        if key not in summary:
            url = row.config.get("url")
            summary[key] = {
                "url": url,
                "transport": row.config.get("transport", "streamable-http"),
                "headers": sorted((row.config.get("headers") or {}).keys()),
                "health": health.health(server.pk, url),
                "tools": [],
            }
        summary[key]["tools"].append(
            {
                "name": row.name,
                "upstreamName": row.config.get("tool"),
                "enabled": row.enabled,
                "missing": bool((row.config.get("synced") or {}).get("missing")),
            }
        )
    return list(summary.values())


def refresh_server_id(server_id: int) -> list[dict]:
    server = Server.objects.filter(pk=server_id).first()
    if server is None:
        return []
    return [r.to_dict() for r in refresh_server(server)]
