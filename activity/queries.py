"""Reading the call log: filters, analytics and CSV export, shared by the dashboard and the API."""

import csv
import io
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db import connection
from django.db.models import Aggregate, Avg, Count, FloatField, Q, QuerySet
from django.db.models.functions import TruncDay, TruncHour
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from .models import CallLog

BUCKETS = {"hour": TruncHour, "day": TruncDay}
TOP_N = 10
MAX_FILLED_BUCKETS = 24 * 92


class FilterError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class CallFilters:
    server: str | None = None  # slug
    tool: str | None = None
    outcome: str | None = None
    surface: str | None = None
    client: str | None = None
    api_key: int | None = None
    since: datetime | None = None
    until: datetime | None = None

    @classmethod
    def from_params(cls, params) -> "CallFilters":
        """From query parameters (server, tool, outcome, surface, client, key, from, to)."""
        outcome = params.get("outcome") or None
        if outcome and outcome not in dict(CallLog.OUTCOMES):
            raise FilterError("outcome", f"must be one of {', '.join(dict(CallLog.OUTCOMES))}")
        surface = params.get("surface") or None
        if surface and surface not in dict(CallLog.SURFACES):
            raise FilterError("surface", f"must be one of {', '.join(dict(CallLog.SURFACES))}")
        api_key = params.get("key") or None
        if api_key is not None:
            try:
                api_key = int(api_key)
            except ValueError:
                raise FilterError("key", "must be a key id") from None
        return cls(
            server=params.get("server") or None,
            tool=params.get("tool") or None,
            outcome=outcome,
            surface=surface,
            client=params.get("client") or None,
            api_key=api_key,
            since=parse_moment(params.get("from"), "from"),
            until=parse_moment(params.get("to"), "to", end_of_day=True),
        )

    def apply(self, queryset: QuerySet) -> QuerySet:
        if self.server:
            queryset = queryset.filter(server_slug=self.server)
        if self.tool:
            queryset = queryset.filter(tool=self.tool)
        if self.outcome:
            queryset = queryset.filter(outcome=self.outcome)
        if self.surface:
            queryset = queryset.filter(surface=self.surface)
        if self.client:
            queryset = queryset.filter(client_name=self.client)
        if self.api_key is not None:
            queryset = queryset.filter(api_key_id=self.api_key)
        if self.since:
            queryset = queryset.filter(at__gte=self.since)
        if self.until:
            queryset = queryset.filter(at__lt=self.until)
        return queryset


def parse_moment(value: str | None, field: str, end_of_day: bool = False) -> datetime | None:
    """An ISO datetime, or a date (its start, or the start of the next day for an upper bound)."""
    if not value:
        return None
    try:
        # A bare date first: Python reads "2026-11-20" as a datetime at midnight too.
        day = parse_date(value)
        if day is not None:
            day = day + timedelta(days=1) if end_of_day else day
            moment = datetime.combine(day, time.min)
        else:
            moment = parse_datetime(value)
        if moment is None:
            raise ValueError
    except ValueError:
        raise FilterError(field, "must be an ISO 8601 date or datetime") from None
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, timezone.get_current_timezone())
    return moment


def calls_for_organizations(organizations) -> QuerySet:
    return CallLog.objects.filter(organization__in=organizations)


def calls_for_server(server) -> QuerySet:
    return CallLog.objects.filter(server=server)


def calls_for_organization(organization) -> QuerySet:
    return CallLog.objects.filter(organization=organization)


class PercentileCont(Aggregate):
    function = "PERCENTILE_CONT"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression, fraction: float, **extra) -> None:
        super().__init__(expression, fraction=float(fraction), **extra)


def analytics(queryset: QuerySet, bucket: str = "hour") -> dict:
    """Totals, latency percentiles, calls over time, top tools and clients of a set of calls."""
    if bucket not in BUCKETS:
        raise FilterError("bucket", f"must be one of {', '.join(BUCKETS)}")
    queryset = queryset.order_by()
    failed = Q(outcome__in=[CallLog.TOOL_ERROR, CallLog.ERROR])
    totals = queryset.aggregate(
        calls=Count("id"),
        errors=Count("id", filter=Q(outcome=CallLog.ERROR)),
        tool_errors=Count("id", filter=Q(outcome=CallLog.TOOL_ERROR)),
        avg_latency_ms=Avg("latency_ms"),
        unique_clients=Count("client_name", distinct=True, filter=~Q(client_name="")),
    )
    p50, p95 = latency_percentiles(queryset)
    calls = totals["calls"]
    series = (
        queryset.annotate(bucket=BUCKETS[bucket]("at"))
        .values("bucket")
        .annotate(calls=Count("id"), failed=Count("id", filter=failed))
        .order_by("bucket")
    )
    tools = (
        queryset.exclude(tool=None)
        .values("tool")
        .annotate(
            calls=Count("id"), failed=Count("id", filter=failed), avg_latency_ms=Avg("latency_ms")
        )
        .order_by("-calls", "tool")[:TOP_N]
    )
    clients = (
        queryset.values("client_name", "client_version")
        .annotate(calls=Count("id"))
        .order_by("-calls", "client_name", "client_version")[:TOP_N]
    )
    return {
        "calls": calls,
        "errors": totals["errors"],
        "tool_errors": totals["tool_errors"],
        "error_rate": _ratio(totals["errors"] + totals["tool_errors"], calls),
        "avg_latency_ms": _round(totals["avg_latency_ms"]),
        "p50_latency_ms": _round(p50),
        "p95_latency_ms": _round(p95),
        "unique_clients": totals["unique_clients"],
        "bucket": bucket,
        "series": _without_gaps(series, bucket),
        "top_tools": [
            {
                "tool": row["tool"],
                "calls": row["calls"],
                "failed": row["failed"],
                "error_rate": _ratio(row["failed"], row["calls"]),
                "avg_latency_ms": _round(row["avg_latency_ms"]),
            }
            for row in tools
        ],
        "clients": [
            {"name": row["client_name"], "version": row["client_version"], "calls": row["calls"]}
            for row in clients
        ],
    }


def _without_gaps(rows, bucket: str) -> list[dict]:
    """Every bucket from the first call to the last, empty ones included, so charts are honest."""
    found = {row["bucket"]: row for row in rows}
    if not found:
        return []
    step = timedelta(hours=1) if bucket == "hour" else timedelta(days=1)
    moment, last = min(found), max(found)
    series = []
    # A gap wider than this is drawn as-is rather than padded with thousands of zeros.
    if (last - moment) / step > MAX_FILLED_BUCKETS:
        return [
            {"at": at.isoformat(), "calls": row["calls"], "failed": row["failed"]}
            for at, row in sorted(found.items())
        ]
    while moment <= last:
        row = found.get(moment, {"calls": 0, "failed": 0})
        series.append({"at": moment.isoformat(), "calls": row["calls"], "failed": row["failed"]})
        moment += step
    return series


def server_analytics(server, filters: CallFilters | None = None, bucket: str = "hour") -> dict:
    queryset = calls_for_server(server)
    return analytics(filters.apply(queryset) if filters else queryset, bucket)


def organization_analytics(
    organization, filters: CallFilters | None = None, bucket: str = "hour"
) -> dict:
    queryset = calls_for_organization(organization)
    return analytics(filters.apply(queryset) if filters else queryset, bucket)


def latency_percentiles(queryset: QuerySet) -> tuple[float | None, float | None]:
    if connection.vendor == "postgresql":
        row = queryset.aggregate(
            p50=PercentileCont("latency_ms", 0.5), p95=PercentileCont("latency_ms", 0.95)
        )
        return row["p50"], row["p95"]
    values = sorted(queryset.values_list("latency_ms", flat=True))
    return _percentile(values, 0.5), _percentile(values, 0.95)


def _percentile(sorted_values: list[float], fraction: float) -> float | None:
    """Linear interpolation, the same definition as Postgres's percentile_cont."""
    if not sorted_values:
        return None
    position = (len(sorted_values) - 1) * fraction
    low, high = math.floor(position), math.ceil(position)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


CSV_COLUMNS = (
    "at",
    "server_slug",
    "surface",
    "method",
    "tool",
    "outcome",
    "latency_ms",
    "key_name",
    "oauth_client",
    "client_name",
    "client_version",
    "user_agent",
    "client_ip",
    "error",
    "session_id",
    "request_id",
)


def csv_lines(queryset: QuerySet) -> Iterator[str]:
    """The calls as CSV, one line at a time (for a StreamingHttpResponse)."""
    yield _csv_line(CSV_COLUMNS)
    for row in queryset.values_list(*CSV_COLUMNS).iterator(chunk_size=2000):
        yield _csv_line(_cell(v) for v in row)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime | date):
        return value.isoformat()
    text = str(value)
    # Spreadsheets run cells starting with these as formulas; user-controlled text must not.
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text


def _csv_line(values: Iterable) -> str:
    out = io.StringIO()
    csv.writer(out).writerow(list(values))
    return out.getvalue()
