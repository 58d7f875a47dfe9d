"""The organization's Audit log page and its CSV export (owners and admins)."""

from django.core.paginator import Paginator
from django.http import StreamingHttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from accounts.policy import Action
from dashboard.views.base import authorize, dashboard_view, page

from . import queries

PAGE_SIZE = 50


def _filters(request):
    try:
        return queries.AuditFilters.from_params(request.GET), None
    except queries.FilterError as exc:
        return queries.AuditFilters(), exc


@require_GET
@dashboard_view
def audit_log(request):
    authorize(request, Action.AUDIT_VIEW)
    filters, error = _filters(request)
    events = filters.apply(queries.events_for(request.org))
    page_obj = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return page(
        request,
        "audit/log.html",
        {
            "section": "audit_log",
            "events": page_obj,
            "filter_error": error,
            "query": query.urlencode(),
            "params": request.GET,
            "actions": queries.actions_in(request.org),
        },
        status=400 if error else 200,
    )


@require_GET
@dashboard_view
def audit_log_csv(request):
    authorize(request, Action.AUDIT_VIEW)
    filters, _error = _filters(request)
    events = filters.apply(queries.events_for(request.org))
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    response = StreamingHttpResponse(queries.csv_lines(events), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="audit-{request.org.slug}-{stamp}.csv"'
    return response
