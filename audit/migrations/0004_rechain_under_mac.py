"""Existing rows are rechained under the MAC (audit/chain.py) with the current key of
AUDIT_MAC_KEYS, oldest first, and an anchor left by an earlier purge is MACed.

Before a chain is rechained, its old SHA-256 chain is verified, and what was found is written
into the chain itself: one `audit.rechain` row at its end says how many rows were rechained,
under which key, and whether the old chain was intact or where it was broken. Rechaining cannot
hide an edit made before the migration: that row keeps the finding, under the MAC.

A purged chain's first kept row keeps linking to the anchor's old SHA-256 value (the row it
named is gone). Migrating back leaves the MACs in place (the old code then reports them).
"""

import hashlib
from datetime import UTC

import orjson
from django.db import migrations
from django.utils import timezone

OLD_GENESIS = "0" * 64
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
BATCH = 500


def _old_digest(row) -> str:
    """The unkeyed chain of migration 0001 (frozen here: it is history)."""
    content = {name: getattr(row, name) for name in HASHED}
    content["at"] = row.at.astimezone(UTC).isoformat(timespec="microseconds")
    content["address"] = row.address or None
    content["prev_hash"] = row.prev_hash
    return hashlib.sha256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _store(connection, batch) -> None:
    # One statement per row, sent together (bulk_update's CASE is quadratic in the batch).
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE audit_auditevent SET prev_hash = %s, key_id = %s, hash = %s WHERE id = %s",
            [(row.prev_hash, row.key_id, row.hash, row.pk) for row in batch],
        )


def _rechain(connection, Event, Anchor, organization_id, key, now) -> None:
    from audit.chain import anchor_mac, digest

    anchor = Anchor.objects.filter(organization_id=organization_id).first()
    rows = Event.objects.filter(organization_id=organization_id).order_by("id")
    if anchor:
        rows = rows.filter(id__gte=anchor.first_id)
        anchor.key_id = key.id
        anchor.mac = anchor_mac(organization_id, anchor.first_id, anchor.prev_hash, key)
        anchor.save(update_fields=["key_id", "mac"])
    old_prev = new_prev = anchor.prev_hash if anchor else OLD_GENESIS
    finding, count, batch = "intact", 0, []
    for row in rows.iterator(chunk_size=BATCH):
        if finding == "intact":
            if row.prev_hash != old_prev:
                finding = f"broken at row {row.pk}: it did not link to the row before it"
            elif _old_digest(row) != row.hash:
                finding = f"broken at row {row.pk}: its content did not match its hash"
        old_prev = row.hash
        row.prev_hash, row.key_id = new_prev, key.id
        row.hash = new_prev = digest(row, key)
        batch.append(row)
        count += 1
        if len(batch) >= BATCH:
            _store(connection, batch)
            batch = []
    if batch:
        _store(connection, batch)
    if count == 0:
        return
    note = Event(
        organization_id=organization_id,
        at=now,
        actor_type="system",
        actor_label="migration audit 0004",
        action="audit.rechain",
        target_type="audit",
        diff={"detail": {"rows": count, "key_id": key.id, "previous_chain": finding}},
        prev_hash=new_prev,
        key_id=key.id,
    )
    note.hash = digest(note, key)
    note.save(force_insert=True)


def forwards(apps, schema_editor):
    from audit import keys

    Event = apps.get_model("audit", "AuditEvent")
    Anchor = apps.get_model("audit", "AuditAnchor")
    ids = set(Event.objects.order_by().values_list("organization_id", flat=True).distinct())
    ids |= set(Anchor.objects.values_list("organization_id", flat=True))
    if not ids:
        return
    postgres = schema_editor.connection.vendor == "postgresql"
    if postgres:  # the migration runs as the table's owner
        schema_editor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER audit_append_only")
    key, now = keys.current(), timezone.now()
    for organization_id in sorted(ids, key=lambda i: -1 if i is None else i):
        _rechain(schema_editor.connection, Event, Anchor, organization_id, key, now)
    if postgres:
        schema_editor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER audit_append_only")


class Migration(migrations.Migration):
    dependencies = [("audit", "0003_mac_key_ids")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
