"""How long call logs are kept, and the purge that enforces it."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from audit import events as audit_events

from .models import CallLog, RetentionOverride


def default_retention_days() -> int:
    return settings.CALL_LOG_RETENTION_DAYS


def retention_days(organization) -> int:
    override = RetentionOverride.objects.filter(organization=organization).first()
    return override.days if override else default_retention_days()


def set_retention_days(organization, days: int | None) -> None:
    """None goes back to the deployment default."""
    audit_events.retention_set(organization, days)
    if days is None:
        RetentionOverride.objects.filter(organization=organization).delete()
        return
    if days < 1:
        raise ValueError("days: must be at least 1")
    RetentionOverride.objects.update_or_create(organization=organization, defaults={"days": days})


def purge_call_log(now=None) -> int:
    """Delete rows older than their organization's retention; returns the number deleted."""
    now = now or timezone.now()
    deleted = 0
    overrides = list(RetentionOverride.objects.values_list("organization_id", "days"))
    for organization_id, days in overrides:
        cutoff = now - timedelta(days=days)
        deleted += CallLog.objects.filter(organization_id=organization_id, at__lt=cutoff).delete()[
            0
        ]
    cutoff = now - timedelta(days=default_retention_days())
    rest = CallLog.objects.filter(at__lt=cutoff).exclude(
        organization_id__in=[org_id for org_id, _ in overrides]
    )
    deleted += rest.delete()[0]
    return deleted
