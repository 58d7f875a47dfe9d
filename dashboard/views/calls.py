"""The call log, its CSV export and the analytics pages, all read through activity.queries."""

from datetime import timedelta

from django.core.paginator import Paginator
from django.http import StreamingHttpResponse
from django.utils import timezone

from activity import queries
from activity.models import CallLog
from dashboard.views.base import DashboardRequest

from .. import charts
from ..scoping import server_or_404
from .base import dashboard_view, page

PAGE_SIZE = 50
RANGES = {
    "24h": (timedelta(hours=24), "hour"),
    "7d": (timedelta(days=7), "day"),
    "30d": (timedelta(days=30), "day"),
}


def _filters(request: DashboardRequest):
    try:
        return queries.CallFilters.from_params(request.GET), None
    except queries.FilterError as exc:
        return queries.CallFilters(), exc


@dashboard_view
def call_log(request: DashboardRequest):
    filters, error = _filters(request)
    calls = filters.apply(queries.calls_for_organization(request.org)).select_related(
        "server", "user", "api_key__service_account"
    )
    paginator = Paginator(calls, PAGE_SIZE)
    page_obj = paginator.get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    tools = (
        queries.calls_for_organization(request.org)
        .exclude(tool=None)
        .order_by()
        .values_list("tool", flat=True)
        .distinct()[:200]
    )
    return page(
        request,
        "dashboard/calls/list.html",
        {
            "calls": page_obj,
            "filters": filters,
            "filter_error": error,
            "query": query.urlencode(),
            "servers": request.org.servers.order_by("name"),
            "tools": sorted(tools),
            "outcomes": CallLog.OUTCOMES,
            "params": request.GET,
        },
        status=400 if error else 200,
    )


@dashboard_view
def call_log_csv(request: DashboardRequest):
    filters, error = _filters(request)
    calls = filters.apply(queries.calls_for_organization(request.org))
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    response = StreamingHttpResponse(queries.csv_lines(calls), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="calls-{request.org.slug}-{stamp}.csv"'
    return response


def _range(request: DashboardRequest):
    key = request.GET.get("range", "24h")
    if key not in RANGES:
        key = "24h"
    span, bucket = RANGES[key]
    return key, timezone.now() - span, bucket


def _analytics_context(data, key, since, bucket):
    return {
        "data": data,
        "range": key,
        "ranges": list(RANGES),
        "calls_chart": charts.calls_over_time(data["series"], since, timezone.now(), bucket),
        "tools_chart": charts.bars([(t["tool"], t["calls"]) for t in data["top_tools"]]),
        "clients_chart": charts.bars(
            [
                (f"{c['name'] or 'unknown'} {c['version']}".strip(), c["calls"])
                for c in data["clients"]
            ]
        ),
    }


@dashboard_view
def organization_analytics(request: DashboardRequest):
    key, since, bucket = _range(request)
    data = queries.organization_analytics(request.org, queries.CallFilters(since=since), bucket)
    return page(
        request, "dashboard/calls/analytics.html", _analytics_context(data, key, since, bucket)
    )


@dashboard_view
def server_analytics(request: DashboardRequest, slug: str):
    server = server_or_404(request, slug)
    key, since, bucket = _range(request)
    data = queries.server_analytics(server, queries.CallFilters(since=since), bucket)
    context = _analytics_context(data, key, since, bucket)
    context["server"] = server
    return page(request, "dashboard/calls/analytics.html", context)
