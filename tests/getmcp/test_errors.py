"""Under /api/ every error is JSON, including Django's own pages and a view that crashes; a
logged traceback is bounded."""

import logging

import pytest
from django.http import HttpResponse
from django.test import override_settings
from django.urls import path

from getmcp.errors import MAX_TRACEBACK_CHARS, BoundedTracebackFormatter, bounded_traceback


def crash(request):
    raise RuntimeError("boom with a secret-looking gmcp_abc token")


def deep(request, n=0):
    return deep(request, n + 1)


def html_error(request):
    return HttpResponse("<h1>teapot</h1>", status=418, content_type="text/html")


urlpatterns = [
    path("api/crash/", crash),
    path("api/deep/", deep),
    path("api/html/", html_error),
    path("dashboard/crash/", crash),
]


@pytest.fixture
def crashing(settings):
    settings.DEBUG = False
    with override_settings(ROOT_URLCONF=__name__):
        yield


@pytest.mark.parametrize("url", ["/api/crash/", "/api/deep/"])
def test_a_crash_under_api_is_a_json_500_without_a_traceback(client, crashing, url, caplog):
    client.raise_request_exception = False
    with caplog.at_level(logging.ERROR, logger="getmcp.errors"):
        response = client.get(url)
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "internal_error"
    assert b"Traceback" not in response.content and b"boom" not in response.content
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "Traceback" in logged
    assert len(logged) < MAX_TRACEBACK_CHARS + 1000


def test_an_html_error_page_under_api_becomes_json(client, crashing):
    response = client.get("/api/html/")
    assert response.status_code == 418
    assert response["Content-Type"] == "application/json"


def test_django_404_and_bad_host_pages_under_api_are_json(client, db):
    assert client.get("/api/no/such/thing").json()["error"]["code"] == "not_found"
    bad_host = client.get("/api/servers/", HTTP_HOST="evil.example")
    assert bad_host.status_code == 400
    assert bad_host["Content-Type"] == "application/json"


def test_a_crash_outside_api_keeps_djangos_page(client, crashing):
    client.raise_request_exception = False
    response = client.get("/dashboard/crash/")
    assert response.status_code == 500
    assert not response["Content-Type"].startswith("application/json")


def test_a_deep_recursion_logs_a_bounded_traceback():
    def recurse(n):
        return recurse(n + 1)

    try:
        recurse(0)
    except RecursionError as exc:
        text = bounded_traceback(exc)
        formatted = BoundedTracebackFormatter().formatException((type(exc), exc, exc.__traceback__))
    assert len(text) <= MAX_TRACEBACK_CHARS + 10
    assert text.count("in recurse") <= 30
    assert formatted.endswith("maximum recursion depth exceeded")
