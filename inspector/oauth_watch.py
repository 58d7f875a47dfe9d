"""Requests to the OAuth endpoints, in the live inspector of the server they concern.

A client connecting to a server that takes OAuth first reads the server's protected resource
metadata (`/.well-known/oauth-protected-resource/mcp/<slug>`, or appended to the server's
path), may register (`/oauth/register`), sends the person to `/oauth/authorize` and exchanges
the code at `/oauth/token`; the last three name the server in their `resource` parameter
(RFC 8707; a registration may carry it in its query or body). Only a `resource` that is this
deployment's canonical URI of the server (oauth.metadata.slug_of_resource, the rule the
endpoints themselves apply) puts a request in that server's inspector: anyone may send a request
naming `https://any-host/mcp/<slug>`, and it must not show there as the server's OAuth traffic. While that server's inspector is
open (the same watch flag as the MCP endpoint's, inspector/watch.py), each of these requests
shows there with its status, latency and, when refused, the OAuth error and its description as
the reason (invalid_client, invalid_grant, a PKCE mismatch, a resource not allowed, ...).

Hidden: every code, token, client secret, PKCE verifier and consent token, in the request (form,
query, JSON, Basic credentials) and in the answer (JSON, the redirect's query); the
Authorization header shows its scheme only; credential-shaped text is masked as in every event.

Cost: a request to any other path pays one prefix check; an OAuth request for an unwatched
server one Redis EXISTS. Events go out at once (a handful a minute), within the same per-server
budget as the endpoint's.
"""

import json
import logging
import re
import time
import uuid
from urllib.parse import parse_qsl, urlencode, urlsplit

from django.conf import settings

from infra.redis import sync_client
from oauth.metadata import slug_of_resource
from servers.models import Server
from servers.slugs import SLUG_PATTERN

from . import events, publish
from .watch import flag_key

log = logging.getLogger(__name__)

METADATA_PATH = re.compile(
    rf"^/(?:\.well-known/oauth-protected-resource/mcp/(?P<inserted>{SLUG_PATTERN})"
    rf"|mcp/(?P<appended>{SLUG_PATTERN})/\.well-known/oauth-protected-resource)$"
)
ENDPOINTS = {
    "/oauth/authorize": "oauth/authorize",
    "/oauth/token": "oauth/token",
    "/oauth/register": "oauth/register",
}
SECRET_FIELDS = frozenset(
    {
        "code",
        "code_verifier",
        "client_secret",
        "refresh_token",
        "access_token",
        "id_token",
        "token",
        "consent_token",
        "registration_access_token",
    }
)
MAX_SHOWN_BYTES = 16 * 1024


def redacted(pairs) -> dict:
    return {
        name: events.REDACTED if name in SECRET_FIELDS else value[:500] for name, value in pairs
    }


def redacted_json(body):
    if isinstance(body, dict):
        return {
            name: events.REDACTED if name in SECRET_FIELDS else redacted_json(value)
            for name, value in body.items()
        }
    if isinstance(body, list):
        return [redacted_json(item) for item in body]
    return body


def redacted_location(location: str) -> str:
    parts = urlsplit(location)
    if not parts.query:
        return location
    query = urlencode(list(redacted(parse_qsl(parts.query, keep_blank_values=True)).items()))
    return parts._replace(query=query).geturl()


class Watched:
    """What the middleware learnt of a request it follows."""

    def __init__(self, slug: str, endpoint: str, body):
        self.slug = slug
        self.endpoint = endpoint
        self.body = body
        self.started = time.perf_counter()


def follow(request) -> Watched | None:
    """The request, when it concerns a server whose inspector is open."""
    path = request.path_info
    match = METADATA_PATH.match(path)
    if match:
        slug = match["inserted"] or match["appended"]
        return _if_watched(slug, "oauth/protected-resource", None)
    endpoint = ENDPOINTS.get(path)
    if endpoint is None:
        return None
    body = None
    slug = slug_of_resource(request.GET.get("resource"))
    if request.method == "POST":
        if endpoint == "oauth/register":
            body = _json_body(request)
            if not slug and isinstance(body, dict):
                slug = slug_of_resource(body.get("resource"))
        else:
            slug = slug or slug_of_resource(request.POST.get("resource"))
    return _if_watched(slug, endpoint, body)


def _json_body(request):
    try:
        raw = request.body
    except Exception:  # too large for Django: the view answers it
        return None
    if len(raw) > MAX_SHOWN_BYTES:
        return {"[truncated]": f"{len(raw)} bytes, not shown"}
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return raw[:2000].decode("utf-8", "replace")


def _if_watched(slug: str, endpoint: str, body) -> Watched | None:
    if not slug:
        return None
    try:
        if not sync_client().exists(flag_key(slug)):
            return None
    except Exception:
        return None  # Redis away: the OAuth flow must not notice
    return Watched(slug, endpoint, body)


def reason_of(response, answer) -> tuple[str, str]:
    """(the OAuth error, its description) of a refused request, else ("", "")."""
    refusal = getattr(response, "oauth_error", None)
    if refusal:
        return refusal
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        return answer["error"], str(answer.get("error_description", ""))
    location = response.get("Location", "") if response.status_code in (301, 302, 303) else ""
    query = dict(parse_qsl(urlsplit(location).query)) if location else {}
    if "error" in query:
        return query["error"], query.get("error_description", "")
    return "", ""


def build(watched: Watched, request, response) -> dict:
    finished = time.perf_counter()
    content_type = response.get("Content-Type", "")
    answer = None
    if "json" in content_type and not getattr(response, "streaming", False):
        try:
            answer = json.loads(response.content[:MAX_SHOWN_BYTES] or b"null")
        except ValueError:
            answer = None
    error, description = reason_of(response, answer)
    if error == "invalid_grant" and "code_verifier" in description:
        error = "pkce_mismatch"
    if request.method == "POST" and watched.endpoint != "oauth/register":
        body = redacted(request.POST.items())
    else:
        body = redacted_json(watched.body)
    form = request.POST if request.method == "POST" else request.GET
    client_name = ""
    if isinstance(watched.body, dict):
        client_name = str(watched.body.get("client_name") or "")
    event = {
        "id": uuid.uuid4().hex,
        "at": time.time() - (finished - watched.started),
        "process": events.PROCESS,
        "server": watched.slug,
        "httpMethod": request.method,
        "transport": "oauth",
        "revision": "",
        "client": {
            "name": (client_name or form.get("client_id") or "")[:200],
            "version": "",
            "userAgent": request.headers.get("User-Agent", "")[:300],
        },
        "credential": "",
        "method": watched.endpoint,
        "target": form.get("grant_type", "") if watched.endpoint == "oauth/token" else "",
        "status": response.status_code,
        "outcome": "refused" if error else ("error" if response.status_code >= 400 else "ok"),
        "reason": error,
        "reasonText": events.REASONS.get(error, error.replace("_", " ")),
        "error": description[:500],
        "latencyMs": round((finished - watched.started) * 1000, 2),
        "taskId": "",
        "request": {
            "headers": events.shown_headers(
                {name.lower(): value for name, value in request.headers.items()}
            ),
            "query": redacted(request.GET.items()),
            "body": body,
        },
        "response": {
            "contentType": content_type,
            "body": redacted_json(answer),
            **(
                {"location": redacted_location(response["Location"])}
                if response.has_header("Location")
                else {}
            ),
        },
    }
    return events.masked(event, None)


class OAuthInspectorMiddleware:
    """Shows the OAuth requests of watched servers in their inspector (module docstring)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        path = request.path_info
        if not (path.startswith("/oauth/") or "oauth-protected-resource" in path):
            return self.get_response(request)
        watched = follow(request)
        response = self.get_response(request)
        if watched is not None:
            self.publish(watched, request, response)
        return response

    def publish(self, watched: Watched, request, response) -> None:
        try:
            server_id = (
                Server.objects.filter(slug=watched.slug).values_list("pk", flat=True).first()
            )
            if server_id is None:
                return
            skipped = publish.budget.take(server_id, settings.INSPECTOR_EVENTS_PER_SECOND)
            if skipped is None:
                return
            event = build(watched, request, response)
            event["skippedBefore"] = skipped
            publish.publish_now(server_id, event)
        except Exception:
            log.warning("live inspector: could not show an OAuth request", exc_info=True)
