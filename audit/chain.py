"""The hash chain: how a row's hash is computed, how rows are appended without forking a
chain, and how a chain is verified.

Each organization has its own chain (rows with no organization, such as failed logins of
unknown addresses, form one more). A row's hash is sha256 over the canonical JSON of its
content plus the previous row's hash, so editing, deleting or reordering any row breaks every
later link. Appends to one chain are serialized by a Postgres transaction-level advisory lock
(held until the writer's transaction ends): two writers cannot both link to the same row.
"""

import hashlib
from dataclasses import dataclass
from datetime import UTC

import orjson
from django.db import connection, transaction
from django.utils import timezone

from .models import AuditAnchor, AuditEvent

GENESIS = "0" * 64
# Advisory-lock keys of the audit chains live at this offset (one per organization).
_LOCK_BASE = 0x41554454 << 24
HASHED = (
    "organization_id",
    "at",
    "actor_type",
    "actor_id",
    "actor_label",
    "address",
    "action",
    "target_type",
    "target_id",
    "target_label",
    "diff",
)


def normalized(value):
    """The value as JSON gives it back (what a JSON column returns when the row is read)."""
    return orjson.loads(orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS))


def canonical(row: AuditEvent) -> bytes:
    content = {name: getattr(row, name) for name in HASHED}
    content["at"] = row.at.astimezone(UTC).isoformat(timespec="microseconds")
    content["address"] = row.address or None
    content["prev_hash"] = row.prev_hash
    return orjson.dumps(content, option=orjson.OPT_SORT_KEYS)


def digest(row: AuditEvent) -> str:
    return hashlib.sha256(canonical(row)).hexdigest()


def _lock(organization_id: int | None) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s)", [_LOCK_BASE + (organization_id or 0)]
            )


def _head(organization_id: int | None) -> str:
    last = (
        AuditEvent.objects.filter(organization_id=organization_id)
        .order_by("-id")
        .values_list("hash", flat=True)
        .first()
    )
    if last is not None:
        return last
    anchor = AuditAnchor.objects.filter(organization_id=organization_id).first()
    return anchor.prev_hash if anchor else GENESIS


def append(**fields) -> AuditEvent:
    """Append one row to its organization's chain (fields: see AuditEvent)."""
    with transaction.atomic():
        _lock(fields.get("organization_id"))
        row = AuditEvent(**fields)
        row.at = timezone.now()
        row.diff = normalized(row.diff or {})
        row.prev_hash = _head(row.organization_id)
        row.hash = digest(row)
        row.save()
    return row


@dataclass
class Broken:
    organization_id: int | None
    row_id: int
    reason: str


def verify(organization_id: int | None) -> tuple[int, Broken | None]:
    """(rows checked, the first broken row or None) for one chain."""
    anchor = AuditAnchor.objects.filter(organization_id=organization_id).first()
    prev = anchor.prev_hash if anchor else GENESIS
    rows = AuditEvent.objects.filter(organization_id=organization_id).order_by("id")
    if anchor:
        rows = rows.filter(id__gte=anchor.first_id)
    checked = 0
    for row in rows.iterator(chunk_size=500):
        checked += 1
        if row.prev_hash != prev:
            return checked, Broken(
                organization_id, row.pk, "does not link to the row before it (one was removed?)"
            )
        if digest(row) != row.hash:
            return checked, Broken(organization_id, row.pk, "its content does not match its hash")
        prev = row.hash
    return checked, None


def chains() -> list[int | None]:
    """Every organization id that has rows or an anchor (None: the chain of no organization)."""
    ids = set(AuditEvent.objects.order_by().values_list("organization_id", flat=True).distinct())
    ids |= set(AuditAnchor.objects.values_list("organization_id", flat=True))
    return sorted(ids, key=lambda i: -1 if i is None else i)
