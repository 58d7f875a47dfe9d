"""Purging audit rows older than AUDIT_RETENTION_DAYS without breaking verification.

Before a chain's old rows go, its anchor records the first kept row and the hash that row links
to; `verify` starts there. On Postgres the purge is the only DELETE the append-only trigger
lets through: it sets `audit.purge` for its own transaction only (SET LOCAL).
"""

from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from .chain import _lock, chains
from .models import AuditAnchor, AuditEvent


def _delete_older(organization_id, first_kept_id: int) -> int:
    table = AuditEvent._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL audit.purge = 'on'")
        where = "organization_id IS NULL" if organization_id is None else "organization_id = %s"
        params = [] if organization_id is None else [organization_id]
        cursor.execute(f"DELETE FROM {table} WHERE {where} AND id < %s", [*params, first_kept_id])
        deleted = cursor.rowcount
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL audit.purge = 'off'")
    return deleted


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
            first_kept = rows.filter(at__gte=cutoff).order_by("id").first()
            if first_kept is None:
                # Everything is old: keep the newest row so the chain's head stays known.
                first_kept = rows.order_by("-id").first()
            AuditAnchor.objects.update_or_create(
                organization_id=organization_id,
                defaults={"first_id": first_kept.pk, "prev_hash": first_kept.prev_hash},
            )
            deleted += _delete_older(organization_id, first_kept.pk)
    return deleted
