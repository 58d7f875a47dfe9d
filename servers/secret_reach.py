"""Who may put a secret within reach of a tool.

Only admins and owners may read or set secrets (`SECRET_WRITE`), yet a tool that names a secret
gets its value at call time, and a tool's author decides what the tool does with it: a code
tool can return `secrets["TOKEN"][::-1]`, which no masking recognises, and an http tool can send
it to a host of its author's choosing. So writing such a tool is reading the secret. The rule:

- A tool's **reach** is the set of secrets its kind says a call can read (ToolKind.secret_names),
  for its config exactly as written (the `digest` of its kind and config).
- A reach runs (is test-run or published) only once it is approved for that digest: by someone
  whose role may read secrets (`Action.SECRET_REACH`, admin and above), either explicitly
  (the tool page's "Approve", `POST .../tools/<id>/approve-secrets/`) or by test-running or
  publishing it themselves. Any change to the config (new code, another URL) is a new digest
  and needs approving again; editing a description, a schema or a title does not.
- Members may write and save such tools; their test runs and publishes are refused with a
  message naming the tool, the secrets and who may approve.
- The platform itself (management commands run by operators, `user=None`) is trusted.

Published versions therefore only ever serve approved reaches, and a rollback restores a
version whose reaches were approved when it was published (or approved now by whoever rolls
back). Approvals are per server, kept while the server exists, and audited
(`server.secret_reach.approve`).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from accounts import policy
from accounts.policy import Action
from audit.record import audit_record

from . import kinds
from .models import SecretReach, Server
from .reach_digest import config_digest


@dataclass(frozen=True)
class Reach:
    """One tool of a definition that can read secrets."""

    tool: str
    digest: str
    secrets: tuple[str, ...]


class ReachNotApproved(Exception):
    """Running or publishing needs approvals the acting person may not give."""

    def __init__(self, pending: list[Reach]) -> None:
        self.pending = pending
        super().__init__(describe(pending))


def describe(pending: list[Reach]) -> str:
    named = "; ".join(f"{reach.tool} reads {', '.join(reach.secrets)}" for reach in pending)
    return (
        f"Secrets need an admin's approval first ({named}). Secrets are for admins and owners, "
        "and a tool reaches what it names: ask one to approve it on the tool's page."
    )


def reaches(definition: dict[str, Any], *, tool: str | None = None) -> list[Reach]:
    """Every tool of a definition (or just `tool`) that names at least one secret."""
    found = []
    for tool_def in definition.get("tools") or []:
        if tool is not None and tool_def.get("name") != tool:
            continue
        kind = kinds.find_kind(tool_def.get("kind", kinds.DEFAULT_KIND))
        if kind is None or not kind.reads_secrets:
            continue
        config = tool_def.get("config") or {}
        settings = definition.get(kind.server_settings) if kind.server_settings else None
        names = kind.secret_names(config, settings)
        if names:
            found.append(
                Reach(
                    tool=tool_def.get("name", ""),
                    digest=config_digest(kind.name, kind.reach_config(config)),
                    secrets=tuple(sorted(names)),
                )
            )
    return found


def pending(server: Server, definition: dict[str, Any], *, tool: str | None = None) -> list[Reach]:
    """The reaches of `definition` that nobody approved for `server` yet."""
    wanted = reaches(definition, tool=tool)
    if not wanted:
        return []
    approved = set(
        SecretReach.objects.filter(
            server=server, tool__in={reach.tool for reach in wanted}
        ).values_list("tool", "digest")
    )
    return [reach for reach in wanted if (reach.tool, reach.digest) not in approved]


def may_approve(*, user, server: Server) -> bool:
    return user is None or policy.can(
        user=user, org=server.organization, action=Action.SECRET_REACH
    )


def approve(*, server: Server, reaches_: Iterable[Reach], user) -> int:
    """Record approvals (the caller checked `may_approve`); returns how many were new."""
    now = timezone.now()
    rows = [
        SecretReach(
            server=server,
            tool=reach.tool,
            digest=reach.digest,
            secrets=list(reach.secrets),
            approved_by=user,
            approved_at=now,
        )
        for reach in reaches_
    ]
    if not rows:
        return 0
    before = SecretReach.objects.filter(server=server).count()
    SecretReach.objects.bulk_create(rows, ignore_conflicts=True)
    added = SecretReach.objects.filter(server=server).count() - before
    for row in rows:
        audit_record(
            action="server.secret_reach.approve",
            organization_id=server.organization_id,
            target_type="tool",
            target_id=str(server.pk),
            target_label=f"{server.slug}/{row.tool}",
            after={"secrets": row.secrets, "digest": row.digest},
        )
    return added


def require_may_send(*, server: Server, headers: Any, user) -> None:
    """Before reaching an upstream with headers a person wrote (adding tools from an upstream
    MCP server): headers naming secrets send them to the URL they chose, so that person must be
    one who may approve a reach."""
    from .kinds.http.config import referenced_secrets

    names = referenced_secrets(headers or {})
    if names and not may_approve(user=user, server=server):
        raise ReachNotApproved([Reach("the upstream's headers", "", tuple(sorted(names)))])


def approve_added(*, server: Server, tools: Iterable[Any], user) -> None:
    """Tools just added by someone who may approve (adding from an upstream after
    require_may_send): their reaches are approved as added, so a refresh may reach them."""
    if not may_approve(user=user, server=server):
        return
    definition = {
        "tools": [
            {"name": tool.name, "kind": tool.kind, "config": tool.config}
            for tool in tools
            if hasattr(tool, "kind")
        ]
    }
    approve(server=server, reaches_=pending(server, definition), user=user)


def require_approved(
    *, server: Server, definition: dict[str, Any], user, tool: str | None = None
) -> None:
    """Before a test run or a publish: every reach approved, approved now by a person who may,
    or ReachNotApproved."""
    waiting = pending(server, definition, tool=tool)
    if not waiting:
        return
    if not may_approve(user=user, server=server):
        raise ReachNotApproved(waiting)
    approve(server=server, reaches_=waiting, user=user)


__all__ = [
    "Reach",
    "ReachNotApproved",
    "approve",
    "approve_added",
    "config_digest",
    "describe",
    "may_approve",
    "pending",
    "reaches",
    "require_approved",
    "require_may_send",
]
