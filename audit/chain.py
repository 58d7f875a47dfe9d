"""The MAC chain: how a row's MAC is computed, how rows are appended without forking a chain,
and how a chain is verified.

Each organization has its own chain (rows with no organization, such as failed logins of
unknown addresses, form one more). A row's `hash` is HMAC-SHA256, under a key that lives in
settings and never in the database (audit/keys.py), over the canonical JSON of its content, the
previous row's MAC and the key's id. Editing, deleting or reordering any row breaks every later
link, and someone who holds the database but not the key cannot compute a MAC that verifies.
What a MAC cannot show (the newest rows deleted) the signed checkpoints do (checkpoints.py).
Appends to one chain are serialized by a Postgres transaction-level advisory lock (held until
the writer's transaction ends): two writers cannot both link to the same row.
"""

import hashlib
import hmac
from dataclasses import dataclass
from datetime import UTC

import orjson
from django.db import connection, transaction
from django.utils import timezone

from . import keys
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


def canonical(row) -> bytes:
    """What a row's MAC covers (`row`: an AuditEvent, or its historical model in a migration)."""
    content = {name: getattr(row, name) for name in HASHED}
    content["at"] = row.at.astimezone(UTC).isoformat(timespec="microseconds")
    content["address"] = row.address or None
    content["prev_hash"] = row.prev_hash
    content["key_id"] = row.key_id
    return orjson.dumps(content, option=orjson.OPT_SORT_KEYS)


def _mac(key: keys.MacKey, message: bytes) -> str:
    return hmac.new(key.secret, message, hashlib.sha256).hexdigest()


def digest(row, key: keys.MacKey | None = None) -> str:
    """The row's MAC under `key` (default: the key its `key_id` names, else the current one)."""
    key = key or keys.lookup(row.key_id) or keys.current()
    return _mac(key, canonical(row))


def anchor_content(organization_id, first_id: int, prev_hash: str, key_id: str) -> bytes:
    # A prefix no row's JSON starts with: an anchor's MAC can never pass for a row's.
    return b"getmcp audit anchor\x00" + orjson.dumps(
        {
            "organization_id": organization_id,
            "first_id": first_id,
            "prev_hash": prev_hash,
            "key_id": key_id,
        },
        option=orjson.OPT_SORT_KEYS,
    )


def anchor_mac(organization_id, first_id: int, prev_hash: str, key: keys.MacKey) -> str:
    return _mac(key, anchor_content(organization_id, first_id, prev_hash, key.id))


def sign(message: bytes) -> tuple[str, str]:
    """(key id, MAC) of anything else the audit trail signs (checkpoints)."""
    key = keys.current()
    return key.id, _mac(key, message)


def signed_by(message: bytes, key_id: str, mac: str) -> bool | None:
    """Whether `mac` is the MAC of `message` under key `key_id` (None: that key is unknown)."""
    key = keys.lookup(key_id)
    if key is None:
        return None
    return hmac.compare_digest(_mac(key, message), mac)


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
        key = keys.current()
        row.key_id = key.id
        row.hash = digest(row, key)
        row.save()
    return row


@dataclass
class Broken:
    organization_id: int | None
    row_id: int
    reason: str


def _anchor_broken(anchor: AuditAnchor) -> str | None:
    ok = signed_by(
        anchor_content(anchor.organization_id, anchor.first_id, anchor.prev_hash, anchor.key_id),
        anchor.key_id,
        anchor.mac,
    )
    if ok is None:
        return (
            f"its anchor is MACed with key {anchor.key_id!r}, which AUDIT_MAC_KEYS no longer holds"
        )
    if not ok:
        return "its anchor (where the purged chain starts) does not match its MAC"
    return None


def verify(organization_id: int | None) -> tuple[int, Broken | None]:
    """(rows checked, the first broken row or None) for one chain."""
    anchor = AuditAnchor.objects.filter(organization_id=organization_id).first()
    prev = GENESIS
    rows = AuditEvent.objects.filter(organization_id=organization_id).order_by("id")
    if anchor:
        if reason := _anchor_broken(anchor):
            return 0, Broken(organization_id, anchor.first_id, reason)
        prev = anchor.prev_hash
        rows = rows.filter(id__gte=anchor.first_id)
    checked = 0
    for row in rows.iterator(chunk_size=500):
        checked += 1
        if row.prev_hash != prev:
            return checked, Broken(
                organization_id, row.pk, "does not link to the row before it (one was removed?)"
            )
        key = keys.lookup(row.key_id)
        if key is None:
            return checked, Broken(
                organization_id,
                row.pk,
                f"is MACed with key {row.key_id!r}, which AUDIT_MAC_KEYS no longer holds",
            )
        if not hmac.compare_digest(digest(row, key), row.hash):
            return checked, Broken(
                organization_id,
                row.pk,
                "its content does not match its MAC (edited, or rehashed without the key)",
            )
        prev = row.hash
    return checked, None


def head(organization_id: int | None) -> tuple[int, str] | None:
    """(id, MAC) of the chain's newest row."""
    return (
        AuditEvent.objects.filter(organization_id=organization_id)
        .order_by("-id")
        .values_list("id", "hash")
        .first()
    )


def chains() -> list[int | None]:
    """Every organization id that has rows or an anchor (None: the chain of no organization)."""
    ids = set(AuditEvent.objects.order_by().values_list("organization_id", flat=True).distinct())
    ids |= set(AuditAnchor.objects.values_list("organization_id", flat=True))
    return sorted(ids, key=lambda i: -1 if i is None else i)
