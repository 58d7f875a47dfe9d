"""The OAuth endpoints' errors as OAuth clients read them, in outages too.

A client at /oauth/token, /oauth/register, /oauth/revoke or a discovery document parses JSON
(RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 8414 §3.2): an HTML page is an unreadable answer, and a
client that cannot read it may drop its tokens or give up instead of retrying. So when Postgres
or Redis is out, these paths answer 503 `{"error": "temporarily_unavailable", ...}` with
Retry-After, and any other failure 500 `{"error": "server_error", ...}`: the codes RFC 6749
§4.1.2.1 names for the same cases. The authorization page answers the same JSON in an outage: its
client and redirect URI cannot be checked then, so there is nowhere safe to send the browser.

A view's own exception is answered here with the service named; any other layer's (a session
read, say) reaches Django's handler500 (api.errors.server_error, a plain page) and is rewritten
here on the way out, keeping its status and Retry-After.
"""

import logging
import re

from django.http import HttpRequest, HttpResponse, JsonResponse

from servers.outages import RETRY_AFTER_SECONDS, outage_message, outage_of

log = logging.getLogger(__name__)

OAUTH_PATH = re.compile(
    r"^/(?:oauth/(?:authorize|token|register|revoke)/?"
    r"|(?:.*/)?\.well-known/(?:oauth-authorization-server|oauth-protected-resource"
    r"|openid-configuration)(?:/.*)?)$"
)
UNAVAILABLE = "The authorization server is temporarily unavailable; retry in a few seconds"


def is_oauth_endpoint(path: str) -> bool:
    return OAUTH_PATH.match(path) is not None


def oauth_error(status: int, description: str) -> JsonResponse:
    error = "temporarily_unavailable" if status == 503 else "server_error"
    response = JsonResponse({"error": error, "error_description": description}, status=status)
    response["Cache-Control"] = "no-store"
    response["Pragma"] = "no-cache"
    # Browser-based clients must be able to read it, as every other answer of these endpoints.
    response["Access-Control-Allow-Origin"] = "*"
    if status == 503:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class OAuthErrorsMiddleware:
    """Answers the OAuth endpoints' failures in JSON (module docstring)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code < 500 or not is_oauth_endpoint(request.path_info):
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        if response.status_code == 503:
            return oauth_error(503, UNAVAILABLE)
        return oauth_error(500, "The authorization server met an unexpected error")

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_oauth_endpoint(request.path_info):
            return None
        service = outage_of(exception)
        if service is None:
            return None  # a bug: Django logs it and handler500 answers (rewritten above)
        log.warning("OAuth request failed: %s unavailable: %r", service, exception)
        return oauth_error(503, outage_message(service))
