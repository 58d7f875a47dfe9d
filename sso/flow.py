"""One browser's way through single sign-on: which organization an email or slug signs in to,
the authorization request (its state, nonce and PKCE verifier kept in the session), and the
callback that checks everything and says who signed in."""

import time
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse

from accounts.models import Organization
from audit import events

from . import oidc, signin
from .models import Connection
from .oidc import SsoError

SESSION_KEY = "sso_flows"
FLOW_SECONDS = 600
MAX_FLOWS = 5  # several tabs may sign in at once; older flows are dropped


def redirect_uri() -> str:
    """The one callback every organization's provider sends people back to."""
    return settings.SITE_URL.rstrip("/") + reverse("sso:callback")


def connections_for_email(email: str) -> list[Connection]:
    domain = signin.email_domain(email)
    if not domain:
        return []
    return [
        c
        for c in Connection.objects.filter(enabled=True).select_related("organization")
        if domain in c.allowed_domains
    ]


def connection_for_slug(slug: str) -> Connection | None:
    return (
        Connection.objects.filter(organization__slug=slug, enabled=True)
        .select_related("organization")
        .first()
    )


def begin(session, connection: Connection, *, next_url: str = "", login_hint: str = "") -> str:
    """The provider's authorization URL for a new flow, remembered in `session`."""
    provider = oidc.discover(connection.issuer, organization_id=connection.organization_id)
    flow = oidc.start(
        provider,
        client_id=connection.client_id,
        redirect_uri=redirect_uri(),
        scope=provider.scope_for(connection.groups_claim),
    )
    flows = {
        state: kept
        for state, kept in (session.get(SESSION_KEY) or {}).items()
        if kept["at"] > time.time() - FLOW_SECONDS
    }
    flows[flow.state] = {
        "connection": connection.pk,
        "nonce": flow.nonce,
        "verifier": flow.code_verifier,
        "next": next_url,
        "at": time.time(),
    }
    session[SESSION_KEY] = dict(sorted(flows.items(), key=lambda kv: kv[1]["at"])[-MAX_FLOWS:])
    url = flow.url
    if login_hint:
        url += "&" + urlencode({"login_hint": login_hint})
    return url


@dataclass(frozen=True)
class Finished:
    sign_in: signin.SignIn
    organization: Organization
    next_url: str


def finish(session, params) -> Finished:
    """Checks the callback's `params` against the flow its state names (used once), exchanges
    the code, verifies the ID token and signs the person in (sso/signin.py). SsoError says why
    not; the organization's audit log keeps it."""
    flows = session.get(SESSION_KEY) or {}
    kept = flows.pop(params.get("state") or "", None)
    session[SESSION_KEY] = flows
    if kept is None or kept["at"] < time.time() - FLOW_SECONDS:
        raise SsoError("This sign-in link expired or was already used: start again.")
    connection = (
        Connection.objects.select_related("organization").filter(pk=kept["connection"]).first()
    )
    if connection is None or not connection.enabled:
        raise SsoError("Single sign-on is not set up for this organization any more.")
    try:
        if params.get("error"):
            described = params.get("error_description") or params["error"]
            raise SsoError(f"The identity provider refused: {described}")
        if not params.get("code"):
            raise SsoError("The identity provider sent no authorization code.")
        provider = oidc.discover(connection.issuer, organization_id=connection.organization_id)
        tokens = oidc.exchange(
            provider,
            organization_id=connection.organization_id,
            client_id=connection.client_id,
            client_secret=connection.client_secret(),
            code=params["code"],
            redirect_uri=redirect_uri(),
            code_verifier=kept["verifier"],
        )
        claims = oidc.verify_id_token(
            tokens["id_token"],
            provider=provider,
            organization_id=connection.organization_id,
            client_id=connection.client_id,
            nonce=kept["nonce"],
        )
        result = signin.sign_in(connection=connection, claims=claims)
    except SsoError as exc:
        events.sso_refused(connection.organization_id, reason=str(exc))
        raise
    events.sso_signed_in(
        result.membership,
        subject=str(claims["sub"]),
        groups=signin.groups_of(claims, connection.groups_claim),
    )
    return Finished(result, connection.organization, kept["next"])
