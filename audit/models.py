"""The audit trail: append-only, hash-chained rows, one chain per organization.

`AuditEvent` rows are never updated or deleted through the ORM (save/delete refuse), and on
Postgres a trigger (migration 0002) refuses UPDATE and DELETE too, except a DELETE inside the
retention purge (which sets `audit.purge` for its transaction). `AuditAnchor` remembers, per
chain, the hash the first kept row links to once older rows were purged, so `manage.py audit
verify` can still check what is left.
"""

from django.db import models


class AppendOnly(Exception):
    """An audit row was about to be changed or deleted."""


class AuditQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnly("audit rows are append-only")

    def delete(self):
        raise AppendOnly("audit rows are append-only (purge through audit.retention)")


class AuditEvent(models.Model):
    ACTOR_USER, ACTOR_TOKEN, ACTOR_KEY, ACTOR_GRANT, ACTOR_SYSTEM = (
        "user",
        "token",
        "key",
        "grant",
        "system",
    )
    ACTOR_TYPES = [
        (ACTOR_USER, "User"),
        (ACTOR_TOKEN, "Personal access token"),
        (ACTOR_KEY, "API key"),
        (ACTOR_GRANT, "OAuth grant"),
        (ACTOR_SYSTEM, "System"),
    ]

    # No foreign keys: a row outlives the user, organization or thing it is about.
    organization_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    at = models.DateTimeField(db_index=True)
    actor_type = models.CharField(max_length=10, choices=ACTOR_TYPES)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=300, blank=True)
    address = models.GenericIPAddressField(null=True, blank=True)
    action = models.CharField(max_length=60, db_index=True)
    target_type = models.CharField(max_length=40, blank=True)
    target_id = models.CharField(max_length=64, blank=True)
    target_label = models.CharField(max_length=300, blank=True)
    diff = models.JSONField(default=dict, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["organization_id", "-id"], name="audit_org_newest")]

    def save(self, *args, **kwargs):
        if self.pk is not None or not self._state.adding:
            raise AppendOnly("audit rows are append-only")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("audit rows are append-only (purge through audit.retention)")

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.action} {self.target_type}:{self.target_label}"


class AuditAnchor(models.Model):
    """Where a purged chain now starts: the first kept row and the hash it links to."""

    organization_id = models.BigIntegerField(null=True, blank=True, unique=True)
    first_id = models.BigIntegerField()
    prev_hash = models.CharField(max_length=64)
    purged_at = models.DateTimeField(auto_now=True)
