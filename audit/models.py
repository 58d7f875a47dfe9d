"""The audit trail: append-only, MAC-chained rows, one chain per organization.

`AuditEvent` rows are never updated or deleted through the ORM (save/delete refuse). On Postgres
a trigger refuses UPDATE and DELETE too, except the DELETE of the retention purge, which runs in
the `audit_purge` function (SECURITY DEFINER, owned by the schema's owner role); the application
role is granted no UPDATE or DELETE at all (docs/audit.md, "Two database roles"). `AuditAnchor`
remembers, per chain, the MAC the first kept row links to once older rows were purged, itself
MACed, so `manage.py audit verify` can still check what is left.
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
    # HMAC-SHA256 of the row (audit/chain.py) under the key named by key_id (audit/keys.py).
    hash = models.CharField(max_length=64, unique=True)
    key_id = models.CharField(max_length=32, default="")

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
    """Where a purged chain now starts: the first kept row and the MAC it links to, MACed so
    that it cannot be moved by someone without the key. Written by the purge only."""

    organization_id = models.BigIntegerField(null=True, blank=True, unique=True)
    first_id = models.BigIntegerField()
    prev_hash = models.CharField(max_length=64)
    purged_at = models.DateTimeField(auto_now=True)
    key_id = models.CharField(max_length=32, default="")
    mac = models.CharField(max_length=64, default="")
