"""Periodic jobs of the authorization server."""

from datetime import UTC, datetime

from celery import shared_task

from accounts.tasks import _delete_unchanged
from infra import keys as rkeys
from infra.redis import sync_client

from .clients import clients_collect_unused
from .models import Grant
from .tokens import successors_forget, tokens_collect_expired


@shared_task(name="oauth.tasks.collect_unused_clients")
def collect_unused_clients() -> int:
    """Self-registered clients that never got a token (claude.ai registers on every connect),
    and codes and tokens long expired."""
    return clients_collect_unused() + tokens_collect_expired()


@shared_task(name="oauth.tasks.forget_refresh_successors")
def forget_refresh_successors() -> int:
    """Empty the sealed pairs of rotated refresh tokens once their grace window is over."""
    return successors_forget()


@shared_task(name="oauth.tasks.flush_grant_usage")
def flush_grant_usage() -> int:
    """Copy the grants' last-used times the endpoint wrote to Redis into Grant.last_used_at."""
    client = sync_client()
    usage = client.hgetall(rkeys.GRANT_USAGE)
    if not usage:
        return 0
    seen = {}
    for raw_id, raw_time in usage.items():
        try:
            seen[int(raw_id)] = datetime.fromtimestamp(float(raw_time), tz=UTC)
        except (ValueError, OverflowError, OSError):
            continue
    changed = []
    for grant in Grant.objects.filter(pk__in=list(seen)).only("pk", "last_used_at"):
        when = seen[grant.pk]
        if grant.last_used_at is None or when > grant.last_used_at:
            grant.last_used_at = when
            changed.append(grant)
    Grant.objects.bulk_update(changed, ["last_used_at"])
    _delete_unchanged(client, usage, rkeys.GRANT_USAGE)
    return len(changed)
