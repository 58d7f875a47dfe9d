"""The single sign-on pages: “Sign in with SSO”, the provider's callback, and the organization's
SSO settings (admins and owners). Thin: sso.flow and sso.config do the work."""

from django.contrib import messages
from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods

from accounts.policy import Action
from dashboard.scoping import switch_to
from dashboard.views.base import DashboardRequest, authorize, dashboard_view, page

from . import config, flow
from .forms import ConnectionForm, StartForm, mapping_text
from .oidc import SsoError
from .sessions import mark_sso_sign_in

BACKEND = "django.contrib.auth.backends.ModelBackend"


def _next(request: HttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    allowed = url_has_allowed_host_and_scheme(
        target, {request.get_host()}, require_https=request.is_secure()
    )
    return target if allowed else ""


def _start_page(request, form, *, error: str = "", choices=(), status: int = 200):
    context = {"form": form, "error": error, "choices": choices, "next": _next(request)}
    return render(request, "sso/start.html", context, status=status)


def _to_provider(request, connection, *, login_hint: str = "", from_form: bool = False):
    try:
        url = flow.begin(
            request.session, connection, next_url=_next(request), login_hint=login_hint
        )
    except SsoError as exc:
        return _start_page(request, StartForm(), error=str(exc), status=502)
    if from_form:
        # The dashboard's policy (form-action 'self', dashboard/csp.py) also governs the
        # redirects that follow a form's POST, and the provider is another origin: the form's
        # answer is a page that moves on by itself (a refresh is no form submission).
        context = {"url": url, "organization": connection.organization}
        return render(request, "sso/redirect.html", context)
    return redirect(url)


@require_http_methods(["GET", "POST"])
def start(request: HttpRequest):
    form = StartForm(request.POST or None)
    if request.method != "POST" or not form.is_valid():
        return _start_page(request, form, status=400 if request.method == "POST" else 200)
    email, slug = form.cleaned_data["email"].lower(), form.cleaned_data["organization"]
    if slug:
        connection = flow.connection_for_slug(slug)
        found = [connection] if connection else []
    else:
        found = flow.connections_for_email(email)
    if not found:
        return _start_page(
            request, form, error="No organization signs in with SSO for that.", status=404
        )
    if len(found) > 1:
        return _start_page(request, form, choices=found)
    return _to_provider(request, found[0], login_hint=email, from_form=True)


@require_GET
def begin(request: HttpRequest, slug: str):
    connection = flow.connection_for_slug(slug)
    if connection is None:
        raise Http404("No single sign-on for that organization.")
    return _to_provider(request, connection, login_hint=request.GET.get("login_hint", ""))


@require_GET
def callback(request: HttpRequest):
    try:
        finished = flow.finish(request.session, request.GET)
    except SsoError as exc:
        return _start_page(request, StartForm(), error=str(exc), status=400)
    login(request, finished.sign_in.user, backend=BACKEND)
    # After login (which may start a new session): this sign-in survives "SSO required".
    mark_sso_sign_in(request.session, finished.organization)
    switch_to(request, finished.sign_in.membership)
    if finished.sign_in.created_membership:
        messages.success(request, f"Welcome to {finished.organization.name}.")
    return redirect(finished.next_url or "dashboard:home")


def _initial(connection) -> dict:
    if connection is None:
        return {"groups_claim": "groups", "enabled": True}
    described = config.describe(connection)
    described["allowed_domains"] = ", ".join(connection.allowed_domains)
    described["role_mapping"] = mapping_text(connection.role_mapping)
    return described


@dashboard_view
@require_http_methods(["GET", "POST"])
def settings_page(request: DashboardRequest):
    authorize(request, Action.SSO_MANAGE)
    connection = config.connection_of(request.org)
    secret_set = bool(connection and connection.has_client_secret)
    if request.method == "POST" and "delete" in request.POST:
        config.delete(actor=request.user, organization=request.org)
        messages.success(request, "Single sign-on removed.")
        return redirect("sso:settings")
    form = ConnectionForm(request.POST or None, initial=_initial(connection), secret_set=secret_set)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                config.save(actor=request.user, organization=request.org, values=form.cleaned_data)
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    form.add_error(field if field in form.fields else None, errors)
            else:
                messages.success(request, "Single sign-on saved.")
                return redirect("sso:settings")
        status = 400
    return page(
        request,
        "sso/settings.html",
        {
            "form": form,
            "connection": connection,
            "redirect_uri": flow.redirect_uri(),
            "section": "sso",
        },
        status=status,
    )
