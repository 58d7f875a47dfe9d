"""GET /metrics: the Prometheus exposition, for a scraper holding METRICS_TOKEN.

Without METRICS_TOKEN, or without `Authorization: Bearer <it>`, the path answers 404 like any
unknown one: it neither exists for the public nor says that it might. Prometheus sends the token
with `authorization: {credentials: ...}` (or `bearer_token_file`) in its scrape config.
"""

import hmac

from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from . import multiproc


def _authorized(request) -> bool:
    token = settings.METRICS_TOKEN
    scheme, _, supplied = request.headers.get("authorization", "").partition(" ")
    if not token or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(supplied.strip().encode(), token.encode())


@require_GET
def metrics(request):
    if not _authorized(request):
        raise Http404
    body = generate_latest(multiproc.exposition_registry())
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
