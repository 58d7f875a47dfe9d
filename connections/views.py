"""The pages a person's browser goes through to connect an account: the link from a URL
elicitation (or a tool error's text), then the provider's redirect back. Thin: flow.py holds
every rule."""

import re
from urllib.parse import urlsplit

import orjson
from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from dashboard.csp import POLICY
from infra import keys
from infra.redis import sync_client

from . import flow
from .models import Provider

# An origin with nothing that could smuggle another directive into the header.
_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.:\[\]-]+$")


def _problem(request: HttpRequest, title: str, text: str, status: int) -> HttpResponse:
    return render(
        request, "connections/problem.html", {"title": title, "text": text}, status=status
    )


@login_required
@require_http_methods(["GET", "POST"])
def connect(request: HttpRequest, elicitation_id: str) -> HttpResponse:
    raw = (
        sync_client().get(keys.connect_elicitation(elicitation_id))
        if len(elicitation_id) < 100
        else None
    )
    if not raw:
        return _problem(
            request,
            "This link has expired",
            "Links to connect an account last 15 minutes. Call the tool again to get a new one.",
            410,
        )
    record = orjson.loads(raw)
    if record["user"] != request.user.pk:
        # Only the person whose call made the link may complete it (else a shared link would
        # connect someone else's account to the caller).
        return _problem(
            request,
            "This link was made for someone else",
            f"You are signed in as {request.user.email}, and this link belongs to another "
            "person's call. Sign in as that person, or call the tool yourself to get your own link.",
            403,
        )
    provider = (
        Provider.objects.filter(pk=record["provider"], organization_id=record["organization"])
        .select_related("organization")
        .first()
    )
    if provider is None:
        return _problem(
            request, "This provider is gone", "An admin removed it from the organization.", 410
        )
    if request.method == "POST":
        url = flow.begin(
            user_id=request.user.pk,
            provider=provider,
            scopes=record["scopes"],
            elicitation_id=elicitation_id,
        )
        return redirect(url)
    response = render(
        request,
        "connections/connect.html",
        {"provider": provider, "scopes": sorted({*provider.scopes, *record["scopes"]})},
    )
    response["Cache-Control"] = "no-store"
    response["Content-Security-Policy"] = _policy_reaching(provider.authorization_url)
    return response


def _policy_reaching(url: str) -> str:
    """The dashboard's policy, but the form may end at the provider: browsers apply
    form-action to the redirect that follows the POST."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    if parts.scheme not in ("http", "https") or not _ORIGIN.match(origin):
        return POLICY
    return POLICY.replace("form-action 'self'", f"form-action 'self' {origin}")


@login_required
@require_GET
def callback(request: HttpRequest) -> HttpResponse:
    record = flow.take_state(request.GET.get("state", ""))
    if record is None:
        return _problem(
            request,
            "This connection attempt is not valid",
            "It expired or was already used. Call the tool again to start over.",
            400,
        )
    if request.GET.get("error"):
        return _problem(
            request,
            "The provider did not connect the account",
            f"It answered {request.GET['error'][:100]!r}. Call the tool again to try once more.",
            400,
        )
    try:
        connection = async_to_sync(flow.finish)(
            user_id=request.user.pk, record=record, code=request.GET.get("code", "")
        )
    except flow.FlowRefused as exc:
        return _problem(request, "The account was not connected", str(exc), 400)
    return render(
        request,
        "connections/connected.html",
        {"connection": connection, "provider": connection.provider},
    )
