"""GET /metrics: the Prometheus exposition, for a scraper holding METRICS_TOKEN.

Without METRICS_TOKEN the path is off, and its 404 says so and how to turn it on (a JSON body):
an operator's first scrape should not look like a typo, and a switched-off endpoint has nothing
to hide. With the token set, a request without `Authorization: Bearer <it>` gets the plain 404
of any unknown path: it neither exists for the public nor says that it might. Prometheus sends
the token with `authorization: {credentials: ...}` (or `bearer_token_file`) in its scrape config.
"""

import hmac

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess

from . import multiproc
from .metrics import REGISTRY
from .scrape import PlatformCollector


def _authorized(request) -> bool:
    token = settings.METRICS_TOKEN
    scheme, _, supplied = request.headers.get("authorization", "").partition(" ")
    if not token or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(supplied.strip().encode(), token.encode())


OFF = {
    "error": "not_found",
    "message": (
        "Metrics are off on this deployment: set METRICS_TOKEN in the environment, restart, and "
        "scrape /metrics with the header `Authorization: Bearer <METRICS_TOKEN>` "
        "(docs/observability.md)."
    ),
}


@require_GET
def metrics(request):
    if not settings.METRICS_TOKEN:
        return JsonResponse(OFF, status=404)
    if not _authorized(request):
        raise Http404
    body = generate_latest(exposition_registry())
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


def exposition_registry():
    """What one scrape reads: every process's in-process metrics and the platform gauges."""
    registry = REGISTRY
    if multiproc.directory():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    return _with_platform(registry, PlatformCollector())


class _Combined:
    def __init__(self, *collectors) -> None:
        self.collectors = collectors

    def collect(self):
        for collector in self.collectors:
            yield from collector.collect()


def _with_platform(registry, platform) -> _Combined:
    return _Combined(registry, platform)
