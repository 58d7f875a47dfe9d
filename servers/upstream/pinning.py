"""Upstream pinning: an upstream cannot change what a server serves without a person's say.

What a tool row serves was approved: its `config.synced` is the upstream definition last
approved (the pin). When a refresh finds the upstream saying something else about a tool
(description, title, schemas, annotations, icons), or offering a tool it did not offer before,
the change is held as an `UpstreamReview` and the row keeps serving the pin until someone
approves (the row then follows the upstream, as before pinning) or rejects it (it stays held
back; the same definition is not raised again, a later different one is). Every hold and
decision is an audit row.

The baseline: the first sync of an upstream connection is approved as it is — adding an
upstream's tools is a person choosing them, and a server's first refresh of an upstream it used
before pinning existed has nothing to compare with. `Server.upstream_baseline` keeps, per
upstream URL, the tool names known since, so only names after it count as new.
`Server.upstream_auto_approve` turns holding off for a server: changes and new tools are taken
at once (and still audited).
"""

import hashlib
import logging

import orjson
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from audit.record import audit_record

from ..models import Server, Tool, UpstreamReview

logger = logging.getLogger(__name__)
DEFINITION_KEYS = ("title", "description", "inputSchema", "outputSchema", "annotations", "icons")


class ReviewError(ValueError):
    """A decision that cannot be made (already decided, a name already taken)."""


def definition_digest(definition: dict) -> str:
    return hashlib.sha256(orjson.dumps(definition, option=orjson.OPT_SORT_KEYS)).hexdigest()


def known(server: Server, url: str) -> set[str] | None:
    names = (server.upstream_baseline or {}).get(url)
    return None if names is None else set(names)


def remember(server: Server, url: str, names) -> None:
    """Add `names` to the upstream's baseline (an UPDATE of that field alone: it is not part of
    the served definition, so no cache or audit row is due)."""
    with transaction.atomic():
        locked = Server.objects.select_for_update().only("upstream_baseline").get(pk=server.pk)
        baseline = dict(locked.upstream_baseline or {})
        baseline[url] = sorted(set(baseline.get(url, [])) | set(names))
        Server.objects.filter(pk=server.pk).update(upstream_baseline=baseline)
    server.upstream_baseline = baseline


def _audit(
    action: str,
    server: Server,
    name: str,
    *,
    tool_id=None,
    before=None,
    after=None,
    detail=None,
    actor=None,
) -> None:
    audit_record(
        action=action,
        organization_id=server.organization_id,
        target_type="upstream_tool",
        target_id=tool_id or "",
        target_label=f"{server.slug}/{name}",
        before=before,
        after=after,
        detail=detail,
        actor=actor,
    )


def _system():
    from audit.context import SYSTEM

    return SYSTEM


def hold(
    server: Server,
    *,
    kind: str,
    url: str,
    connection: dict,
    upstream_name: str,
    pending: dict,
    approved: dict | None = None,
    tool: Tool | None = None,
) -> UpstreamReview | None:
    """Hold a changed or new upstream definition (the review; the open one when it is held
    already). None when this very definition was rejected before: nothing is held."""
    digest = definition_digest(pending)
    same = UpstreamReview.objects.filter(
        server=server, url=url, upstream_name=upstream_name, kind=kind
    )
    if same.filter(digest=digest, state=UpstreamReview.REJECTED).exists():
        return None
    held = same.filter(digest=digest, state=UpstreamReview.PENDING).first()
    if held is not None:
        return held
    review = same.filter(state=UpstreamReview.PENDING).first()
    if review is None:
        review = UpstreamReview(
            server=server, url=url, upstream_name=upstream_name, kind=kind, tool=tool
        )
    review.connection = connection
    review.approved = approved or {}
    review.pending = pending
    review.digest = digest
    review.save()
    _audit(
        "upstream.hold",
        server,
        upstream_name,
        tool_id=tool.pk if tool else None,
        before=approved,
        after=pending,
        detail={"kind": kind, "url": url},
        actor=_system(),
    )
    return review


def expose_new(server: Server, connection: dict, upstream_name: str, definition: dict) -> Tool:
    """A tool the upstream newly offers, exposed under its own name."""
    if server.tools.filter(name=upstream_name).exists():
        raise ReviewError(f"the server already has a tool named {upstream_name!r}; rename it first")
    position = (server.tools.aggregate(top=Max("position"))["top"] or 0) + 1
    return Tool.objects.create(
        server=server,
        name=upstream_name,
        title=str(definition.get("title") or "")[:200],
        description=definition.get("description") or upstream_name,
        input_schema=definition.get("inputSchema") or {"type": "object"},
        output_schema=definition.get("outputSchema"),
        annotations=definition.get("annotations") or {},
        icons=definition.get("icons") or [],
        kind="upstream",
        config={**connection, "tool": upstream_name, "synced": definition},
        position=position,
    )


def auto_approved(server: Server, name: str, *, tool_id, before, after, kind: str) -> None:
    _audit(
        "upstream.auto_approve",
        server,
        name,
        tool_id=tool_id,
        before=before,
        after=after,
        detail={"kind": kind},
        actor=_system(),
    )


def new_tools(server, url: str, connection: dict, offered: dict, report) -> None:
    """Tools the upstream offers beyond its baseline: exposed (auto-approve) or held."""
    for name, fresh in sorted(offered.items()):
        if server.upstream_auto_approve:
            try:
                tool = expose_new(server, connection, name, fresh)
            except ReviewError:
                logger.warning("upstream tool %s of %s: name taken, not exposed", name, server)
                continue
            remember(server, url, [name])
            auto_approved(server, name, tool_id=tool.pk, before=None, after=fresh, kind="new")
            report.added.append(name)
        elif hold(
            server, kind="new", url=url, connection=connection, upstream_name=name, pending=fresh
        ):
            report.held.append(name)


def follow(row: Tool, fresh: dict) -> list[str]:
    """Bring a row in step with an approved upstream definition: a field the owner never changed
    (still what the upstream said last time) follows it; schemas always do. Saves the row and
    returns the fields that changed."""
    synced = row.config.get("synced") or {}
    changed = follow_fields(row, synced, fresh)
    row.config = {**row.config, "synced": fresh}
    row.save(update_fields=sorted({*changed, "config"}))
    return changed


def follow_fields(row: Tool, synced: dict, fresh: dict) -> list[str]:
    changed = []
    for key, attribute, empty in (
        ("description", "description", ""),
        ("title", "title", ""),
        ("annotations", "annotations", {}),
        ("icons", "icons", []),
    ):
        current = getattr(row, attribute)
        if current == synced.get(key, empty) and current != fresh.get(key, empty):
            value = fresh.get(key, empty)
            setattr(row, attribute, value[:200] if attribute == "title" else value)
            changed.append(attribute)
    if row.input_schema != fresh.get("inputSchema", row.input_schema):
        row.input_schema = fresh["inputSchema"]
        changed.append("input_schema")
    if row.output_schema != fresh.get("outputSchema"):
        row.output_schema = fresh.get("outputSchema")
        changed.append("output_schema")
    return changed


def open_reviews(server: Server):
    return server.upstream_reviews.filter(state=UpstreamReview.PENDING).select_related("tool")


def _decide(review: UpstreamReview, state: str, user) -> None:
    review.state = state
    review.decided_at = timezone.now()
    review.decided_by = user if getattr(user, "is_authenticated", False) else None
    review.save(update_fields=["state", "decided_at", "decided_by"])


def approve(review: UpstreamReview, *, user=None) -> Tool:
    """Serve what the upstream says now: the row follows it (or the new tool is exposed)."""
    with transaction.atomic():
        review = UpstreamReview.objects.select_for_update().get(pk=review.pk)
        if review.state != UpstreamReview.PENDING:
            raise ReviewError("this change was decided already")
        server = review.server
        if review.kind == UpstreamReview.NEW:
            tool = expose_new(server, review.connection, review.upstream_name, review.pending)
            remember(server, review.url, [review.upstream_name])
        else:
            # django-stubs types the pk lookup as str | int, but Django takes None (IS NULL).
            tool = Tool.objects.select_for_update().get(pk=review.tool_id)  # type: ignore[misc]
            follow(tool, review.pending)
        _decide(review, UpstreamReview.APPROVED, user)
        _audit(
            "upstream.approve",
            server,
            review.upstream_name,
            tool_id=tool.pk,
            before=review.approved,
            after=review.pending,
            detail={"kind": review.kind},
        )
    return tool


def reject(review: UpstreamReview, *, user=None) -> None:
    """Keep serving the pin; this definition is not raised again."""
    with transaction.atomic():
        review = UpstreamReview.objects.select_for_update().get(pk=review.pk)
        if review.state != UpstreamReview.PENDING:
            raise ReviewError("this change was decided already")
        if review.kind == UpstreamReview.NEW:
            remember(review.server, review.url, [review.upstream_name])
        _decide(review, UpstreamReview.REJECTED, user)
        _audit(
            "upstream.reject",
            review.server,
            review.upstream_name,
            tool_id=review.tool_id,
            before=review.approved,
            after=review.pending,
            detail={"kind": review.kind},
        )


def changed_fields(review: UpstreamReview) -> list[dict]:
    """[{field, before, after}] of what the upstream changed (for the dashboard's diff)."""
    fields = []
    for key in DEFINITION_KEYS:
        before, after = review.approved.get(key), review.pending.get(key)
        if before != after:
            fields.append({"field": key, "before": before, "after": after})
    return fields
