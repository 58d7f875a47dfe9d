"""Purging audit rows older than AUDIT_RETENTION_DAYS without breaking verification.

Before a chain's old rows go, its anchor records the first kept row and the MAC that row links
to, MACed itself (so `verify` starts there and nobody without the key can move it). On Postgres
the purge is the `audit_purge` function (migration 0005): the application role may EXECUTE it
but holds no DELETE on the table, and the function deletes only rows older than the cutoff and
never within the last day. SQLite (embedded mode) deletes here, in Python.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from . import keys
from .chain import _lock, anchor_mac, chains
from .models import AuditAnchor, AuditEvent


def _purge_in_postgres(organization_id, first_kept: AuditEvent, cutoff: datetime) -> int:
    key = keys.current()
    mac = anchor_mac(organization_id, first_kept.pk, first_kept.prev_hash, key)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT audit_purge(%s, %s, %s, %s, %s)",
            [organization_id, first_kept.pk, cutoff, key.id, mac],
        )
        return cursor.fetchone()[0]


def _purge_in_python(organization_id, first_kept: AuditEvent) -> int:
    key = keys.current()
    AuditAnchor.objects.update_or_create(
        organization_id=organization_id,
        defaults={
            "first_id": first_kept.pk,
            "prev_hash": first_kept.prev_hash,
            "key_id": key.id,
            "mac": anchor_mac(organization_id, first_kept.pk, first_kept.prev_hash, key),
        },
    )
    table = AuditEvent._meta.db_table
    where = "organization_id IS NULL" if organization_id is None else "organization_id = %s"
    params = [] if organization_id is None else [organization_id]
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table} WHERE {where} AND id < %s", [*params, first_kept.pk])
        return cursor.rowcount


def purge(days: int | None = None, *, now=None) -> int:
    """Delete rows older than `days` (default AUDIT_RETENTION_DAYS; 0 keeps everything)."""
    days = settings.AUDIT_RETENTION_DAYS if days is None else days
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted = 0
    for organization_id in chains():
        with transaction.atomic():
            _lock(organization_id)
            rows = AuditEvent.objects.filter(organization_id=organization_id)
            if not rows.filter(at__lt=cutoff).exists():
                continue
            # Everything old: the newest row stays, so the chain's head stays known.
            first_kept = (
                rows.filter(at__gte=cutoff).order_by("id").first() or rows.order_by("-id").first()
            )
            if first_kept is None or not rows.filter(id__lt=first_kept.pk).exists():
                continue
            if connection.vendor == "postgresql":
                deleted += _purge_in_postgres(organization_id, first_kept, cutoff)
            else:
                deleted += _purge_in_python(organization_id, first_kept)
    return deleted
