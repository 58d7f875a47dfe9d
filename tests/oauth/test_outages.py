"""Which paths are OAuth endpoints, and how their failures are rewritten on the way out (the
live outage itself: tests/faults/test_oauth_during_outages.py)."""

import json

import pytest
from django.db import OperationalError
from django.http import HttpResponse, JsonResponse
from django.test import RequestFactory

from oauth.outages import OAuthErrorsMiddleware, is_oauth_endpoint


@pytest.mark.parametrize(
    "path",
    [
        "/oauth/token",
        "/oauth/authorize",
        "/oauth/register",
        "/oauth/revoke",
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-authorization-server/tenant",
        "/.well-known/openid-configuration",
        "/tenant/.well-known/openid-configuration",
        "/.well-known/oauth-protected-resource/mcp/weather",
        "/mcp/weather/.well-known/oauth-protected-resource",
    ],
)
def test_the_oauth_endpoints_and_discovery_documents_are_oauth_paths(path):
    assert is_oauth_endpoint(path)


@pytest.mark.parametrize(
    "path", ["/", "/api/servers/", "/account/connected-apps/", "/oauth/tokens", "/mcp/weather"]
)
def test_other_pages_are_not(path):
    assert not is_oauth_endpoint(path)


def _through(response, path="/oauth/token"):
    request = RequestFactory().post(path)
    return OAuthErrorsMiddleware(lambda _request: response)(request)


def test_an_html_503_of_an_oauth_endpoint_becomes_temporarily_unavailable_json():
    page = HttpResponse("<h1>Temporarily unavailable</h1>", status=503)
    answer = _through(page)
    assert answer.status_code == 503
    assert answer["Content-Type"] == "application/json"
    assert answer["Retry-After"] == "5"
    assert json.loads(answer.content)["error"] == "temporarily_unavailable"


def test_an_html_500_becomes_server_error_json_without_details():
    answer = _through(HttpResponse("<h1>Server error</h1> boom", status=500))
    assert (answer.status_code, json.loads(answer.content)["error"]) == (500, "server_error")
    assert "boom" not in answer.content.decode()
    assert not answer.has_header("Retry-After")


def test_json_answers_and_other_paths_pass_untouched():
    json_answer = JsonResponse({"error": "invalid_grant"}, status=400)
    assert _through(json_answer) is json_answer
    page = HttpResponse("<h1>Temporarily unavailable</h1>", status=503)
    assert _through(page, "/servers/") is page


def test_an_outage_raised_by_an_oauth_view_names_the_service():
    middleware = OAuthErrorsMiddleware(lambda request: HttpResponse())
    request = RequestFactory().post("/oauth/token")
    answer = middleware.process_exception(request, OperationalError("connection refused"))
    assert answer.status_code == 503
    assert "database" in json.loads(answer.content)["error_description"]
    assert middleware.process_exception(request, KeyError("bug")) is None
