"""Reading the audit log: the filters the dashboard page, its CSV and the API share."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet

from activity.queries import FilterError, _cell, _csv_line, parse_moment

from .models import AuditEvent

__all__ = ["AuditFilters", "FilterError", "csv_lines", "events_for"]

CSV_COLUMNS = (
    "id",
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
    "prev_hash",
    "hash",
    "key_id",
)


@dataclass
class AuditFilters:
    actor: str | None = None  # part of the actor's label (an email, a key or token name)
    action: str | None = None  # an action ("server.update") or a family ("server")
    target: str | None = None  # a target type ("tool") or part of its label
    since: datetime | None = None
    until: datetime | None = None

    @classmethod
    def from_params(cls, params) -> "AuditFilters":
        def text(name):
            value = (params.get(name) or "").strip()
            if len(value) > 200:
                raise FilterError(name, "is too long")
            return value or None

        return cls(
            actor=text("actor"),
            action=text("action"),
            target=text("target"),
            since=parse_moment(params.get("from"), "from"),
            until=parse_moment(params.get("to"), "to", end_of_day=True),
        )

    def apply(self, queryset: QuerySet) -> QuerySet:
        if self.actor:
            queryset = queryset.filter(
                Q(actor_label__icontains=self.actor) | Q(actor_type=self.actor)
            )
        if self.action:
            queryset = queryset.filter(
                Q(action=self.action) | Q(action__startswith=self.action.rstrip(".") + ".")
            )
        if self.target:
            queryset = queryset.filter(
                Q(target_type=self.target) | Q(target_label__icontains=self.target)
            )
        if self.since:
            queryset = queryset.filter(at__gte=self.since)
        if self.until:
            queryset = queryset.filter(at__lt=self.until)
        return queryset


def events_for(organization) -> QuerySet:
    return AuditEvent.objects.filter(organization_id=organization.pk).order_by("-id")


def csv_lines(queryset: QuerySet) -> Iterator[str]:
    import orjson

    yield _csv_line(CSV_COLUMNS)
    for row in queryset.values_list(*CSV_COLUMNS).iterator(chunk_size=2000):
        yield _csv_line(_cell(orjson.dumps(v).decode() if isinstance(v, dict) else v) for v in row)


def actions_in(organization) -> list[str]:
    return sorted(
        AuditEvent.objects.filter(organization_id=organization.pk)
        .order_by()
        .values_list("action", flat=True)
        .distinct()[:300]
    )
