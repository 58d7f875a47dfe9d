"""Thin HTTP views of the authorization server; the rules live in the service modules."""

import base64
import binascii
import re
from urllib.parse import unquote, urlencode, urlsplit

import orjson
from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from dashboard.csp import POLICY
from servers.models import Server, accepts_oauth

from . import metadata
from .authorization import RedirectError, authorization_request_parse, code_issue, redirect_with
from .client_metadata import JWT_BEARER
from .clients import (
    client_authenticate,
    client_register,
    registration_response,
    registration_retry_after,
)
from .consent import consent_token, consent_token_valid
from .errors import OAuthError
from .grants import grant_create, is_member
from .id_jag import token_from_id_jag
from .redirects import form_action_source, host_of
from .service_clients import client_from_assertion, token_from_client_credentials
from .tokens import token_from_code, token_from_refresh, token_revoke

MAX_REGISTRATION_BYTES = 64 * 1024
SOURCE_RE = re.compile(r"^[a-z][a-z0-9+.-]*:(//[A-Za-z0-9.:\[\]-]+)?$")
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def _cors(response, methods: str = "GET, OPTIONS"):
    # Browser-based MCP clients (the Inspector, web apps) discover and exchange tokens here.
    response["Access-Control-Allow-Origin"] = "*"
    response["Access-Control-Allow-Methods"] = methods
    response["Access-Control-Allow-Headers"] = "authorization, content-type, mcp-protocol-version"
    return response


def _json(body, status: int = 200, headers=None, methods: str = "GET, OPTIONS"):
    return _cors(JsonResponse(body, status=status, headers=headers), methods)


def _error(exc: OAuthError, methods: str = "POST, OPTIONS"):
    headers = dict(NO_STORE)
    if exc.status == 401:
        headers["WWW-Authenticate"] = 'Basic realm="getmcp"'
    return _json(exc.as_dict(), exc.status, headers, methods)


def _preflight(methods):
    return _cors(HttpResponse(status=204), methods)


@csrf_exempt
@require_http_methods(["GET", "OPTIONS"])
def protected_resource(request, slug: str):
    if request.method == "OPTIONS":
        return _preflight("GET, OPTIONS")
    server = Server.objects.filter(slug=slug).first()
    # A server that does not take OAuth serves no OAuth metadata: header-only clients are never
    # steered into a browser flow.
    if server is None or server.status == Server.DRAFT or not accepts_oauth(server.auth_mode):
        return _json({"error": "not_found"}, 404)
    return _json(metadata.protected_resource_metadata(server))


@csrf_exempt
@require_http_methods(["GET", "OPTIONS"])
def protected_resource_root(request):
    if request.method == "OPTIONS":
        return _preflight("GET, OPTIONS")
    # Each server is its own protected resource; this site root is none of them.
    return _json(
        {
            "error": "not_found",
            "error_description": "Protected resource metadata is per server: "
            "/.well-known/oauth-protected-resource/mcp/<slug> (named in the 401's "
            "WWW-Authenticate header)",
        },
        404,
    )


@csrf_exempt
@require_http_methods(["GET", "OPTIONS"])
def authorization_server(request):
    if request.method == "OPTIONS":
        return _preflight("GET, OPTIONS")
    return _json(metadata.authorization_server_metadata())


@csrf_exempt
@require_http_methods(["GET", "OPTIONS"])
def authorization_server_at(request, issuer_path: str):
    if request.method == "OPTIONS":
        return _preflight("GET, OPTIONS")
    # The document answers only for the issuer it names (RFC 8414 §3.3: a client checks that
    # `issuer` is the identifier it built this URL from). Other paths, such as an MCP server's
    # /mcp/<slug> tried by clients that never read its resource metadata, are not issuers here.
    if issuer_path.strip("/") != metadata.issuer_path() or not metadata.issuer_path():
        return _json(
            {
                "error": "not_found",
                "error_description": "Not an issuer here; the authorization server's metadata "
                f"is at {metadata.authorization_server_metadata_url()}",
            },
            404,
        )
    return _json(metadata.authorization_server_metadata())


def _source_ip(request) -> str | None:
    return request.META.get("REMOTE_ADDR") or None


@csrf_exempt
@require_http_methods(["POST", "OPTIONS"])
def register(request):
    if request.method == "OPTIONS":
        return _preflight("POST, OPTIONS")
    retry_after = registration_retry_after(source_ip=_source_ip(request))
    if retry_after is not None:
        exc = OAuthError("too_many_requests", "Too many registrations; retry later", 429)
        response = _error(exc)
        response["Retry-After"] = str(retry_after)
        return response
    if len(request.body) > MAX_REGISTRATION_BYTES:
        return _error(OAuthError("invalid_client_metadata", "The registration is too large"))
    try:
        body = orjson.loads(request.body or b"null")
        client, secret = client_register(metadata=body, source_ip=_source_ip(request))
    except orjson.JSONDecodeError:
        return _error(OAuthError("invalid_client_metadata", "The body must be JSON"))
    except OAuthError as exc:
        return _error(exc)
    return _json(registration_response(client, secret), 201, NO_STORE, "POST, OPTIONS")


def _client_credentials(request) -> tuple[str | None, str | None]:
    """client_secret_basic (RFC 6749 §2.3.1, form-encoded parts) or the form's fields."""
    header = request.headers.get("Authorization", "")
    if header[:6].lower() == "basic ":
        try:
            decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise OAuthError("invalid_client", "Malformed Basic credentials", 401) from None
        client_id, _, secret = decoded.partition(":")
        return unquote(client_id), unquote(secret)
    return request.POST.get("client_id"), request.POST.get("client_secret")


def _token_client(request):
    """The token endpoint's client: a private_key_jwt assertion (RFC 7523 §2.2), or an id with
    its secret (basic or post), or a public client's id alone."""
    if request.POST.get("client_assertion") is not None:
        return client_from_assertion(
            client_id=request.POST.get("client_id"),
            assertion_type=request.POST.get("client_assertion_type"),
            assertion=request.POST.get("client_assertion"),
        )
    client_id, secret = _client_credentials(request)
    return client_authenticate(client_id=client_id, client_secret=secret)


@csrf_exempt
@require_http_methods(["POST", "OPTIONS"])
def token(request):
    if request.method == "OPTIONS":
        return _preflight("POST, OPTIONS")
    form = request.POST
    try:
        client = _token_client(request)
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            body = token_from_code(
                client=client,
                code=form.get("code"),
                redirect_uri=form.get("redirect_uri"),
                code_verifier=form.get("code_verifier"),
                resource=form.get("resource"),
            )
        elif grant_type == "refresh_token":
            body = token_from_refresh(
                client=client,
                refresh_token=form.get("refresh_token"),
                resource=form.get("resource"),
                scope=form.get("scope"),
            )
        elif grant_type == JWT_BEARER:
            body = token_from_id_jag(
                client=client,
                assertion=form.get("assertion"),
                resource=form.get("resource"),
                scope=form.get("scope"),
            )
        elif grant_type == "client_credentials":
            body = token_from_client_credentials(
                client=client, resource=form.get("resource"), scope=form.get("scope")
            )
        else:
            raise OAuthError(
                "unsupported_grant_type",
                f"Use {', '.join(metadata.GRANT_TYPES)}",
            )
    except OAuthError as exc:
        return _error(exc)
    return _json(body, 200, NO_STORE, "POST, OPTIONS")


@csrf_exempt
@require_http_methods(["POST", "OPTIONS"])
def revoke(request):
    if request.method == "OPTIONS":
        return _preflight("POST, OPTIONS")
    try:
        client = _token_client(request)
        token_revoke(client=client, token=request.POST.get("token"))
    except OAuthError as exc:
        return _error(exc)
    return _cors(HttpResponse(status=200, headers=NO_STORE), "POST, OPTIONS")


class ClientRedirect(HttpResponse):
    """A 302 to the client's redirect URI, which may use a native app's own scheme (Django's
    redirect responses allow http, https and ftp only)."""

    status_code = 302

    def __init__(self, location: str) -> None:
        super().__init__(headers={"Location": location, **NO_STORE})


@csrf_exempt  # the consent form carries its own token (consent.py says why)
@require_http_methods(["GET", "POST"])
def authorize(request):
    params = request.GET if request.method == "GET" else request.POST
    if request.method == "POST" and not same_origin(request):
        response = render(request, "oauth/error.html", {"error": "cross_origin_post"}, status=403)
        return refused(response, "cross_origin_post")
    try:
        pending = authorization_request_parse(params=params)
    except RedirectError as exc:
        return ClientRedirect(exc.location())
    except OAuthError as exc:
        context = {"error": exc.error, "description": exc.description}
        response = render(request, "oauth/error.html", context, status=400)
        return refused(response, exc.error, exc.description)
    fields = _carried_fields(params)
    if not request.user.is_authenticated:
        # Also a consent POST whose session ended meanwhile: sign in again and see the same
        # request, rather than a dead end the client waits behind.
        return redirect_to_login(f"{request.path}?{urlencode(fields)}")
    server = pending.server
    context = {
        "pending": pending,
        "client": pending.client,
        "redirect_host": host_of(pending.redirect_uri),
        "server": server,
        "organization": server.organization,
        "fields": fields,
        "consent_token": consent_token(user=request.user, fields=fields),
        "deny_url": redirect_with(
            pending.redirect_uri, {"error": "access_denied", "state": pending.state}
        ),
    }
    # The one organization check of this view: only members can grant access to its servers.
    if not is_member(user=request.user, organization_id=server.organization_id):
        response = render(request, "oauth/not_member.html", context, status=403)
        return refused(response, "not_member")
    token_ok = request.method == "POST" and consent_token_valid(
        token=request.POST.get("consent_token"), user=request.user, fields=fields
    )
    if not token_ok:
        # A GET, or a form that is not this user's answer to this request (expired, another
        # account signed in since, tampered, forged): show the request to confirm afresh.
        status = 200 if request.method == "GET" else 400
        response = render(request, "oauth/consent.html", context, status=status)
        response["Cache-Control"] = "no-store"
        response["Content-Security-Policy"] = consent_policy(pending.redirect_uri)
        return response
    if request.POST.get("decision") != "allow":
        return ClientRedirect(context["deny_url"])
    grant = grant_create(
        user=request.user,
        server=server,
        client=pending.client,
        scope=pending.scope,
        resource=pending.resource,
    )
    code = code_issue(grant=grant, request=pending)
    return ClientRedirect(
        redirect_with(pending.redirect_uri, {"code": code, "state": pending.state})
    )


def refused(response, error: str, description: str = ""):
    """An HTML refusal of the authorization page, with its reason kept on the response object
    (never sent) for the server's live inspector (inspector/oauth_watch.py)."""
    response.oauth_error = (error, description)
    return response


def same_origin(request) -> bool:
    """Browsers name the page a form was sent from; the consent form is served here. (No Origin
    header: not a browser's cross-site form, and the consent token still has to match.)"""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    allowed = {
        f"{request.scheme}://{request.get_host()}",
        _origin_of(settings.SITE_URL),
        *settings.CSRF_TRUSTED_ORIGINS,
    }
    return origin in allowed


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def consent_policy(redirect_uri: str) -> str:
    """The dashboard's policy, except that the consent form may end at the client's redirect URI:
    browsers apply form-action to the redirect that follows the POST."""
    target = form_action_source(redirect_uri)
    if not SOURCE_RE.match(target):
        return POLICY  # nothing that could smuggle another directive into the header
    return POLICY.replace("form-action 'self'", f"form-action 'self' {target}")


CARRIED = (
    "response_type",
    "client_id",
    "redirect_uri",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
    "scope",
)


def _carried_fields(params) -> list[tuple[str, str]]:
    return [(name, params[name]) for name in CARRIED if params.get(name) is not None]
