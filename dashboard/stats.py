"""The few numbers the dashboard shows outside the call log, read through the activity app."""

from django.db.models import Count
from django.utils import timezone

from activity import queries


def calls_today(organization, servers) -> dict[int, int]:
    """Calls per server id since midnight (UTC)."""
    start = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    rows = (
        queries.CallFilters(since=start)
        .apply(queries.calls_for_organization(organization))
        .filter(server__in=[s.pk for s in servers])
        .order_by()
        .values("server")
        .annotate(n=Count("id"))
    )
    return {row["server"]: row["n"] for row in rows}
