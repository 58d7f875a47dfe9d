"""Keeping a server's upstream tools in step with their upstreams (a refresh), and the summary
of its upstreams the dashboard shows. Adding them in the first place: adding.py.

A server's upstreams are not rows of their own: they are the distinct (url, transport,
headers) of its `upstream` tools. Each such tool row keeps, in `config.synced`, what the
upstream said about it at the last refresh, so a refresh can tell a description the owner
rewrote (kept) from one the upstream changed (followed). Input and output schemas always
follow the upstream: it is the upstream that validates the arguments.
"""

import logging
from dataclasses import dataclass, field

import orjson

from ..models import SecretReach, Server, Tool
from ..reach_digest import config_digest, upstream_reach_config
from . import health, pinning
from .config import SECRET_REFERENCE
from .connection import UpstreamUnreachable
from .target import (
    DEFAULT_TRANSPORT,
    UpstreamError,
    connection_config,
    fetch_tools,
    group_key,
    synced_fields,
    upstream_of,
)

logger = logging.getLogger(__name__)


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


def refresh_server(server: Server) -> list[UpstreamReport]:
    """Re-list every upstream of `server` and bring its tool rows in step with what it says."""
    rows = list(server.tools.filter(kind="upstream"))
    groups: dict[tuple, list[Tool]] = {}
    for row in rows:
        groups.setdefault(group_key(row.config), []).append(row)
    reports = []
    for (url, transport, _headers), members in groups.items():
        report = UpstreamReport(url=url, transport=transport)
        reports.append(report)
        waiting = _awaiting_approval(server, members)
        if waiting:
            report.status = "unreachable"
            report.error = waiting
            continue
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
            connection = connection_config(url, transport, members[0].config.get("headers"))
            pinning.new_tools(
                server,
                url,
                connection,
                {name: synced_fields(offered[name]) for name in set(offered) - exposed - baseline},
                report,
            )
        report.available = sorted(set(offered) - exposed - set(report.added))
    return reports


def _awaiting_approval(server: Server, rows: list[Tool]) -> str:
    """Headers naming secrets go to the row's URL: a draft row repointed by someone who may not
    read them is not refreshed (which would send them there) until an admin approves it
    (servers/secret_reach.py; the same digest, computed here without the kinds, which import
    this package). Why not: "" when nothing waits."""
    waiting = []
    for row in rows:
        text = orjson.dumps(row.config.get("headers") or {}).decode()
        if not SECRET_REFERENCE.search(text):
            continue
        digest = config_digest(row.kind, upstream_reach_config(row.config))
        if not SecretReach.objects.filter(server=server, tool=row.name, digest=digest).exists():
            waiting.append(row.name)
    if not waiting:
        return ""
    return (
        f"Not refreshed: {', '.join(waiting)} sends secrets in its headers and waits for an "
        "admin's approval of its current URL and headers."
    )


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
        fresh = synced_fields(offered)
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
                connection=connection_config(
                    row.config.get("url"),
                    row.config.get("transport", DEFAULT_TRANSPORT),
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
        key = group_key(row.config)
        if key not in summary:
            url = row.config.get("url")
            summary[key] = {
                "url": url,
                "transport": row.config.get("transport", DEFAULT_TRANSPORT),
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
