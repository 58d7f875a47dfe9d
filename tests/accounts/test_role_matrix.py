"""Every dashboard, account and API route, generated from the URL configuration, requested with
every method it supports as owner, admin, member, viewer, an outsider (a member of another
organization only) and an anonymous visitor, against the role table (docs/roles.md).

Adding a route means adding ONE line to EXPECTED below. A route missing from EXPECTED fails
`test_every_route_is_in_the_role_table` by name; a method a route serves but its line leaves
out fails that route's test.

The columns of a line:
  name      the URL name (`namespace:name`, or the DRF router's name for /api/ routes)
  kwargs    URL arguments; a string naming an attribute of the test world (`world`) stands
            for its value, any other value is used as it is
  methods   {METHOD: who}, where who is the least role allowed (VIEWER < MEMBER < ADMIN <
            OWNER), USER (anyone logged in), PUBLIC (anyone), ADDRESSEE/SELF (only the invited
            outsider / only the owner; everybody else 403 or 404), LINK (an invitation link:
            the addressee and anonymous visitors, who are asked to log in), NOWHERE (404 for
            everybody), BEARER (only an organization's SCIM bearer token, never a login: 401
            for everybody here), or a list of Case(who, body) when the body decides
  scope     OBJECT: the URL (or body) names the organization's objects, so an outsider gets 404;
            CURRENT: the route acts on the caller's own current organization (an outsider gets
            their own, and nothing of the target organization may show in the answer);
            NAMED: like CURRENT for reads, but writes name the target organization in the body
            or query, which an outsider must have refused (400 or 404, as for one that does not
            exist)
  body      a request body (JSON for /api/, a form otherwise); "{org}" is the target org's slug
"""

from dataclasses import dataclass, field
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.core import mail
from django.core.signals import request_finished
from django.db import close_old_connections, transaction
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from accounts import services
from accounts.models import ApiKey, Membership, ServiceAccount, User
from activity.models import CallLog
from api.models import PersonalAccessToken
from connections.models import Connection, Provider
from dashboard.scoping import SESSION_KEY
from mcptasks.models import Task
from oauth.models import Client, Grant, TrustedIssuer
from servers import publishing
from servers.models import Prompt, Resource, ResourceTemplate, Server, Tool, UpstreamReview
from vault.crypto import encrypt
from vault.models import Secret

VIEWER, MEMBER, ADMIN, OWNER = "viewer", "member", "admin", "owner"
USER, PUBLIC, ADDRESSEE, SELF, NOWHERE = "user", "public", "addressee", "self", "nowhere"
LINK = "link"
BEARER = "bearer"
RANK = {VIEWER: 0, MEMBER: 1, ADMIN: 2, OWNER: 3}
OBJECT, CURRENT, NAMED = "object", "current", "named"
PRINCIPALS = ["owner", "admin", "member", "viewer", "outsider", "anonymous"]
WRITES = ["POST", "PUT", "PATCH", "DELETE"]
# Text that only the target organization's pages contain.
MARKERS = ["target-srv", "TARGET_SECRET", "target-owner-key", "Target Org"]


@dataclass
class Case:
    who: str
    body: dict | None = None


@dataclass
class R:
    name: str
    methods: dict
    scope: str = OBJECT
    kwargs: dict = field(default_factory=dict)
    body: dict | None = None


SRV = {"slug": "server_slug"}
API_SRV = {"server_slug": "server_slug"}
ORG = {"organization": "{org}"}

EXPECTED = [
    # ---- accounts (accounts/urls.py) ----
    R("accounts:signup", {"GET": PUBLIC, "POST": PUBLIC}, CURRENT),
    R("accounts:login", {"GET": PUBLIC, "POST": PUBLIC}, CURRENT),
    R("accounts:logout", {"POST": PUBLIC}, CURRENT),
    R("accounts:password_reset", {"GET": PUBLIC, "POST": PUBLIC}, CURRENT),
    R("accounts:password_reset_done", {"GET": PUBLIC}, CURRENT),
    R(
        "accounts:password_reset_confirm",
        {"GET": PUBLIC},
        CURRENT,
        kwargs={"uidb64": "MQ", "token": "set-password"},
    ),
    R("accounts:password_reset_complete", {"GET": PUBLIC}, CURRENT),
    R("accounts:settings", {"GET": USER, "POST": USER}, CURRENT),
    R("accounts:invitations", {"GET": USER}, CURRENT),
    R("accounts:invitation_accept", {"POST": ADDRESSEE}, kwargs={"pk": "invitation_pk"}),
    R("accounts:invitation_decline", {"POST": ADDRESSEE}, kwargs={"pk": "invitation_pk"}),
    R(
        "accounts:invitation",
        {"GET": LINK, "POST": LINK},
        kwargs={"token": "invitation_token"},
        body={"answer": "accept"},
    ),
    # ---- dashboard (dashboard/urls.py) ----
    R("dashboard:home", {"GET": VIEWER}, CURRENT),
    R("dashboard:server_list", {"GET": VIEWER}, CURRENT),
    R("dashboard:server_create", {"GET": MEMBER, "POST": MEMBER}, CURRENT),
    R("dashboard:server_detail", {"GET": VIEWER}, kwargs=SRV),
    R("dashboard:server_settings", {"GET": VIEWER, "POST": ADMIN}, kwargs=SRV),
    R("dashboard:server_delete", {"GET": ADMIN, "POST": ADMIN}, kwargs=SRV),
    R("dashboard:server_status", {"POST": ADMIN}, kwargs=SRV, body={"status": "paused"}),
    R("dashboard:connect", {"GET": VIEWER}, kwargs=SRV),
    R("dashboard:doctor", {"GET": VIEWER, "POST": MEMBER}, kwargs=SRV),
    R("dashboard:playground", {"GET": VIEWER}, kwargs=SRV),
    R("dashboard:playground_key", {"POST": MEMBER}, kwargs=SRV),
    R("dashboard:task_list", {"GET": VIEWER}, kwargs=SRV),
    R("inspector:inspector", {"GET": VIEWER}, kwargs=SRV),
    R("dashboard:task_cancel", {"POST": MEMBER}, kwargs={**SRV, "task_id": "task_pk"}),
    R("dashboard:import_tools", {"GET": MEMBER, "POST": MEMBER}, kwargs=SRV),
    R("dashboard:version_list", {"GET": VIEWER, "POST": MEMBER}, kwargs=SRV),
    R(
        "dashboard:version_rollback",
        {"POST": MEMBER},
        kwargs={**SRV, "version": "version"},
    ),
    R("dashboard:server_analytics", {"GET": VIEWER}, kwargs=SRV),
    R("dashboard:tool_toggle", {"POST": MEMBER}, kwargs={**SRV, "pk": "tool_pk"}),
    R(
        "dashboard:tools_bulk",
        {"POST": MEMBER},
        kwargs=SRV,
        body={"action": "enable", "scope": "matching"},
    ),
    R("dashboard:tool_test", {"GET": VIEWER, "POST": MEMBER}, kwargs={**SRV, "pk": "tool_pk"}),
    R("dashboard:tool_approve_secrets", {"POST": ADMIN}, kwargs={**SRV, "pk": "tool_pk"}),
    R("dashboard:part_create", {"GET": MEMBER, "POST": MEMBER}, kwargs={**SRV, "part": "part"}),
    R(
        "dashboard:part_edit",
        {"GET": VIEWER, "POST": MEMBER},
        kwargs={**SRV, "part": "part", "pk": "tool_pk"},
    ),
    R(
        "dashboard:part_delete",
        {"GET": MEMBER, "POST": MEMBER},
        kwargs={**SRV, "part": "part", "pk": "tool_pk"},
    ),
    R(
        "dashboard:part_move",
        {"POST": MEMBER},
        kwargs={**SRV, "part": "part", "pk": "tool_pk"},
        body={"direction": "down"},
    ),
    R("dashboard:schema_check", {"POST": VIEWER}, CURRENT),
    R("dashboard:palette_search", {"GET": VIEWER}, CURRENT),
    R("dashboard:key_list", {"GET": VIEWER}, CURRENT),
    # Tool views: generating one is editing the server; the sandbox relay page a preview frames
    # holds nothing of any organization (its policy comes from the query), so anyone may load it.
    R("dashboard:view_generate", {"POST": MEMBER}, kwargs=SRV),
    R("dashboard:view_sandbox", {"GET": PUBLIC}, CURRENT),
    R("dashboard:key_create", {"GET": MEMBER, "POST": MEMBER}, CURRENT, body={"name": "k"}),
    R("dashboard:key_revoke", {"POST": ADMIN}, kwargs={"pk": "owner_key_pk"}),
    R("dashboard:key_access", {"GET": ADMIN, "POST": ADMIN}, kwargs={"pk": "owner_key_pk"}),
    R("dashboard:key_transfer", {"POST": ADMIN}, kwargs={"pk": "owner_key_pk"}, body={}),
    R(
        "dashboard:service_account_list",
        {"GET": VIEWER, "POST": ADMIN},
        CURRENT,
        body={"name": "another bot", "role": "member"},
    ),
    R(
        "dashboard:service_account_update",
        {"POST": ADMIN},
        kwargs={"pk": "service_account_pk"},
        body={"role": "admin"},
    ),
    R("dashboard:service_account_disable", {"POST": ADMIN}, kwargs={"pk": "service_account_pk"}),
    R("dashboard:service_account_enable", {"POST": ADMIN}, kwargs={"pk": "service_account_pk"}),
    R("dashboard:service_account_delete", {"POST": ADMIN}, kwargs={"pk": "service_account_pk"}),
    R(
        "dashboard:service_account_key_create",
        {"GET": ADMIN, "POST": ADMIN},
        kwargs={"pk": "service_account_pk"},
        body={"name": "k"},
    ),
    R(
        "dashboard:service_client_create",
        {"GET": ADMIN, "POST": ADMIN},
        kwargs={"pk": "service_account_pk"},
        body={"name": "runner"},
    ),
    R("dashboard:service_client_delete", {"POST": ADMIN}, kwargs={"pk": "service_client_pk"}),
    R(
        "dashboard:trusted_issuer_list",
        {"GET": ADMIN, "POST": ADMIN},
        CURRENT,
        body={
            "name": "Another IdP",
            "issuer": "https://another-idp.example",
            "jwks_url": "https://another-idp.example/jwks",
            "subject_mapping": "email",
        },
    ),
    R(
        "dashboard:trusted_issuer_edit",
        {"GET": ADMIN, "POST": ADMIN},
        kwargs={"pk": "trusted_issuer_pk"},
        body={
            "name": "Renamed IdP",
            "issuer": "https://idp.example",
            "jwks_url": "https://idp.example/jwks",
            "subject_mapping": "email",
            "enabled": "on",
        },
    ),
    R("dashboard:trusted_issuer_delete", {"POST": ADMIN}, kwargs={"pk": "trusted_issuer_pk"}),
    R(
        "dashboard:connected_accounts",
        {"GET": VIEWER, "POST": ADMIN},
        CURRENT,
        body={"preset": "github", "key": "gh2", "client_id": "x", "account_mode": "per_user"},
    ),
    R("dashboard:provider_delete", {"POST": ADMIN}, kwargs={"pk": "provider_pk"}),
    R("dashboard:provider_connect_shared", {"POST": ADMIN}, kwargs={"pk": "provider_pk"}),
    # The owner's own connection: the owner revokes it as its person, admins as admins; members
    # and viewers may revoke only their own.
    R("dashboard:connection_revoke", {"POST": ADMIN}, kwargs={"pk": "connection_pk"}),
    # The pages a connect link leads to: any signed-in person reaches them, and they refuse
    # what is not theirs (an unknown or someone else's link, a state they did not start).
    R(
        "connections:connect",
        {"GET": USER, "POST": USER},
        CURRENT,
        kwargs={"elicitation_id": "no-such-link"},
    ),
    R("connections:callback", {"GET": USER}, CURRENT),
    R("dashboard:usage", {"GET": VIEWER, "POST": OWNER}, CURRENT, body={"task_concurrency": "2"}),
    R(
        "dashboard:secret_list",
        {"GET": VIEWER, "POST": ADMIN},
        CURRENT,
        body={"name": "NEW_ONE", "value": "v"},
    ),
    R("dashboard:secret_delete", {"POST": ADMIN}, kwargs={"pk": "secret_pk"}),
    R("dashboard:call_log", {"GET": VIEWER}, CURRENT),
    R("dashboard:call_log_csv", {"GET": VIEWER}, CURRENT),
    R("audit:log", {"GET": ADMIN}, CURRENT),
    R("upstream:add_tools", {"GET": MEMBER, "POST": MEMBER}, kwargs=SRV),
    R("upstream:reviews", {"GET": VIEWER}, kwargs=SRV),
    R(
        "upstream:review_approve",
        {"POST": MEMBER},
        kwargs={**SRV, "pk": "upstream_review_pk"},
    ),
    R(
        "upstream:review_reject",
        {"POST": MEMBER},
        kwargs={**SRV, "pk": "upstream_review_pk"},
    ),
    R("upstream:auto_approve", {"POST": ADMIN}, kwargs=SRV, body={"auto_approve": "on"}),
    R("audit:log_csv", {"GET": ADMIN}, CURRENT),
    # ---- single sign-on (sso/urls.py) ----
    R("sso:start", {"GET": PUBLIC, "POST": PUBLIC}, CURRENT),
    R("sso:callback", {"GET": PUBLIC}, CURRENT),  # no flow in the session: 400, signed in or not
    R("sso:begin", {"GET": NOWHERE}, kwargs={"slug": "org_slug"}),  # no SSO in this world
    R("sso:settings", {"GET": ADMIN, "POST": ADMIN}, CURRENT),
    R("dashboard:analytics", {"GET": VIEWER}, CURRENT),
    R("dashboard:organization_create", {"GET": USER, "POST": USER}, CURRENT),
    R(
        "dashboard:organization_switch",
        {"POST": VIEWER},
        body={"organization": "{org}"},
    ),
    R(
        "dashboard:organization_settings",
        {
            "GET": VIEWER,
            "POST": [Case(ADMIN, {"name": "Renamed"}), Case(OWNER, {"retention_days": "7"})],
        },
        CURRENT,
    ),
    R(
        "dashboard:members",
        {"GET": VIEWER, "POST": ADMIN},
        CURRENT,
        body={"email": "new@example.com", "role": "member"},
    ),
    R(
        "dashboard:member_role",
        {
            "POST": [
                Case(ADMIN, {"role": "viewer"}),
                Case(OWNER, {"role": "owner"}),
            ]
        },
        kwargs={"pk": "dave_membership_pk"},
    ),
    R("dashboard:member_remove", {"POST": ADMIN}, kwargs={"pk": "dave_membership_pk"}),
    R("dashboard:invitation_revoke", {"POST": ADMIN}, kwargs={"pk": "invitation_pk"}),
    R(
        "dashboard:scim",
        {"GET": ADMIN, "POST": ADMIN},
        CURRENT,
        body={"default_role": "member", "group_roles": "Engineering = admin"},
    ),
    R("dashboard:scim_token", {"POST": ADMIN}, CURRENT),
    R("dashboard:scim_token_revoke", {"POST": ADMIN}, CURRENT),
    # ---- SCIM (scim/urls.py): the organization's SCIM token authenticates, never a login ----
    R("scim:config", {"GET": BEARER}, CURRENT),
    R("scim:schemas", {"GET": BEARER}, CURRENT),
    R("scim:schema", {"GET": BEARER}, CURRENT, kwargs={"schema_id": "User"}),
    R("scim:resource_types", {"GET": BEARER}, CURRENT),
    R("scim:resource_type", {"GET": BEARER}, CURRENT, kwargs={"type_id": "User"}),
    R("scim:users", {"GET": BEARER, "POST": BEARER}, CURRENT, body={"userName": "x@e.example"}),
    R(
        "scim:user",
        {"GET": BEARER, "PUT": BEARER, "PATCH": BEARER, "DELETE": BEARER},
        CURRENT,
        kwargs={"uid": "00000000-0000-0000-0000-000000000000"},
    ),
    R("scim:groups", {"GET": BEARER, "POST": BEARER}, CURRENT, body={"displayName": "x"}),
    R(
        "scim:group",
        {"GET": BEARER, "PUT": BEARER, "PATCH": BEARER, "DELETE": BEARER},
        CURRENT,
        kwargs={"uid": "00000000-0000-0000-0000-000000000000"},
    ),
    R("scim:not_found", {"GET": NOWHERE}, CURRENT, kwargs={"path": "Nothing"}),
    R("dashboard:token_list", {"GET": USER}, CURRENT),
    R("dashboard:token_create", {"GET": USER, "POST": USER}, CURRENT, body={"name": "t"}),
    R("dashboard:token_revoke", {"POST": SELF}, kwargs={"pk": "owner_token_pk"}),
    # ---- OAuth (oauth/urls.py): discovery and the protocol endpoints are public by design ----
    R("oauth:authorization_server", {"GET": PUBLIC}, CURRENT),
    R("oauth:openid", {"GET": PUBLIC}, CURRENT),
    R("oauth:protected_resource", {"GET": NOWHERE}, kwargs=SRV),  # a key-only server: none
    R("oauth:protected_resource_root", {"GET": NOWHERE}, CURRENT),
    R("oauth:protected_resource_appended", {"GET": NOWHERE}, kwargs=SRV),  # key-only: none
    # Issuer at the site root: a path under the well-known names is no issuer here.
    *(
        R(f"oauth:{name}", {"GET": NOWHERE}, kwargs={"issuer_path": "tenant"})
        for name in (
            "authorization_server_inserted",
            "openid_inserted",
            "openid_appended",
            "authorization_server_appended",
        )
    ),
    R("oauth:authorize", {"GET": PUBLIC, "POST": PUBLIC}, CURRENT),
    # The client authenticates itself here (a public client by its id), never the dashboard user.
    R(
        "oauth:token",
        {"POST": PUBLIC},
        CURRENT,
        body={"grant_type": "refresh_token", "refresh_token": "x", "client_id": "matrix-client"},
    ),
    R("oauth:register", {"POST": PUBLIC}, CURRENT),
    R("oauth:revoke", {"POST": PUBLIC}, CURRENT, body={"token": "x", "client_id": "matrix-client"}),
    R("oauth:connected_apps", {"GET": USER}, CURRENT),
    R("oauth:connected_app_revoke", {"POST": ADMIN}, kwargs={"pk": "grant_pk"}),
    R("oauth:connected_app_access", {"GET": ADMIN, "POST": ADMIN}, kwargs={"pk": "grant_pk"}),
    R("dashboard:static", {"GET": PUBLIC}, CURRENT, kwargs={"path": "css/app.css"}),
    # ---- API (api/urls.py) ----
    R("api-schema", {"GET": PUBLIC}, CURRENT),
    R("api-docs", {"GET": PUBLIC}, CURRENT),
    # Prometheus: only the METRICS_TOKEN bearer (tests/observability), never a login.
    R("metrics", {"GET": NOWHERE}, CURRENT),
    R("calls-csv", {"GET": VIEWER}, CURRENT),
    R("organization-audit", {"GET": ADMIN}, kwargs={"slug": "org_slug"}),
    R(
        "organization-sso",
        {"GET": ADMIN, "PUT": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN},
        kwargs={"slug": "org_slug"},
        body={"issuer": "https://idp.example", "client_id": "c", "allowed_domains": ["t.example"]},
    ),
    R("organization-members", {"GET": VIEWER}, kwargs={"slug": "org_slug"}),
    R(
        "organization-member",
        {"DELETE": ADMIN},
        kwargs={"slug": "org_slug", "pk": "dave_membership_pk"},
    ),
    R(
        "organization-scim",
        {"GET": ADMIN, "PATCH": ADMIN},
        kwargs={"slug": "org_slug"},
        body={"defaultRole": "viewer"},
    ),
    R("organization-scim-token", {"POST": ADMIN, "DELETE": ADMIN}, kwargs={"slug": "org_slug"}),
    R("organization-list", {"GET": VIEWER}, CURRENT),
    R("organization-detail", {"GET": VIEWER, "PATCH": OWNER}, kwargs={"slug": "org_slug"}),
    R("organization-usage", {"GET": VIEWER}, kwargs={"slug": "org_slug"}),
    R("organization-analytics", {"GET": VIEWER}, kwargs={"slug": "org_slug"}),
    R(
        "server-list",
        {"GET": VIEWER, "POST": MEMBER},
        NAMED,
        body={"slug": "made-here", "name": "n", **ORG},
    ),
    R("server-import-", {"POST": MEMBER}, NAMED, body={"slug": "imported-here", "name": "n"}),
    R(
        "server-detail",
        {"GET": VIEWER, "PUT": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN},
        kwargs={"slug": "server_slug"},
        body={"status": "paused"},
    ),
    R("server-analytics", {"GET": VIEWER}, kwargs={"slug": "server_slug"}),
    R("server-export", {"GET": VIEWER}, kwargs={"slug": "server_slug"}),
    R(
        "server-rollback",
        {"POST": MEMBER},
        kwargs={"slug": "server_slug"},
        body={"version": "1.0.0"},
    ),
    R("server-tool-list", {"GET": VIEWER, "POST": MEMBER}, kwargs=API_SRV),
    R("server-tool-import-api-commit", {"POST": MEMBER}, kwargs=API_SRV),
    R(
        "server-tool-bulk",
        {"POST": MEMBER},
        kwargs=API_SRV,
        body={"action": "enable", "match": {"search": "x"}},
    ),
    R("server-tool-import-api-preview", {"POST": MEMBER}, kwargs=API_SRV),
    R(
        "server-tool-detail",
        {"GET": VIEWER, "PUT": MEMBER, "PATCH": MEMBER, "DELETE": MEMBER},
        kwargs={**API_SRV, "pk": "tool_pk"},
    ),
    R("server-tool-test", {"POST": MEMBER}, kwargs={**API_SRV, "pk": "tool_pk"}),
    R("server-tool-approve-secrets", {"POST": ADMIN}, kwargs={**API_SRV, "pk": "tool_pk"}),
    *(
        R(f"server-{part}-from-upstream{step}", {"POST": MEMBER}, kwargs=API_SRV)
        for part in ("tool", "prompt", "resource")
        for step in ("", "-preview")
    ),
    R("server-resource-list", {"GET": VIEWER, "POST": MEMBER}, kwargs=API_SRV),
    R(
        "server-resource-detail",
        {"GET": VIEWER, "PUT": MEMBER, "PATCH": MEMBER, "DELETE": MEMBER},
        kwargs={**API_SRV, "pk": "resource_pk"},
    ),
    R("server-resource-template-list", {"GET": VIEWER, "POST": MEMBER}, kwargs=API_SRV),
    R(
        "server-resource-template-detail",
        {"GET": VIEWER, "PUT": MEMBER, "PATCH": MEMBER, "DELETE": MEMBER},
        kwargs={**API_SRV, "pk": "template_pk"},
    ),
    R("server-prompt-list", {"GET": VIEWER, "POST": MEMBER}, kwargs=API_SRV),
    R(
        "server-prompt-detail",
        {"GET": VIEWER, "PUT": MEMBER, "PATCH": MEMBER, "DELETE": MEMBER},
        kwargs={**API_SRV, "pk": "prompt_pk"},
    ),
    R("server-version-list", {"GET": VIEWER, "POST": MEMBER}, kwargs=API_SRV),
    R("server-version-detail", {"GET": VIEWER}, kwargs={**API_SRV, "version": "version"}),
    R("key-list", {"GET": VIEWER, "POST": MEMBER}, NAMED, body={"name": "k", **ORG}),
    R(
        "key-detail",
        {"GET": VIEWER, "PUT": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN},
        kwargs={"pk": "owner_key_pk"},
        body={"name": "renamed"},
    ),
    R(
        "service-account-list",
        {"GET": VIEWER, "POST": ADMIN},
        NAMED,
        body={"name": "another bot", **ORG},
    ),
    R(
        "service-account-detail",
        {"GET": VIEWER, "PUT": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN},
        kwargs={"pk": "service_account_pk"},
        body={"name": "renamed bot"},
    ),
    R(
        "service-account-keys",
        {"POST": ADMIN},
        kwargs={"pk": "service_account_pk"},
        body={"name": "k"},
    ),
    R(
        "service-account-clients",
        {"GET": ADMIN, "POST": ADMIN},
        kwargs={"pk": "service_account_pk"},
        body={"name": "runner"},
    ),
    R(
        "service-account-client",
        {"DELETE": ADMIN},
        kwargs={"pk": "service_account_pk", "client_id": "service_client_id"},
    ),
    R(
        "trusted-issuer-list",
        {"GET": VIEWER, "POST": ADMIN},
        NAMED,
        body={
            "name": "Another IdP",
            "issuer": "https://another-idp.example",
            "jwksUrl": "https://another-idp.example/jwks",
            **ORG,
        },
    ),
    R(
        "trusted-issuer-detail",
        {"GET": VIEWER, "PUT": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN},
        kwargs={"pk": "trusted_issuer_pk"},
        body={
            "name": "Renamed IdP",
            "issuer": "https://idp.example",
            "jwksUrl": "https://idp.example/jwks",
        },
    ),
    R(
        "connection-provider-list",
        {"GET": VIEWER, "POST": ADMIN},
        NAMED,
        body={"preset": "github", "key": "gh2", "clientId": "x", **ORG},
    ),
    R(
        "connection-provider-detail",
        {"GET": VIEWER, "PUT": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN},
        kwargs={"pk": "provider_pk"},
        body={"clientId": "y", "name": "Renamed"},
    ),
    # Everyone lists their own connections; the owner's one is reachable by the owner as its
    # person and by admins as admins; members and viewers find it nonexistent.
    R("connection-list", {"GET": USER}, CURRENT),
    R("connection-detail", {"GET": ADMIN, "DELETE": ADMIN}, kwargs={"pk": "connection_pk"}),
    R("token-list", {"GET": USER, "POST": USER}, CURRENT, body={"name": "t"}),
    R("token-detail", {"GET": SELF, "DELETE": SELF}, kwargs={"pk": "owner_token_pk"}),
    R("call-list", {"GET": VIEWER}, CURRENT),
    R("call-detail", {"GET": VIEWER}, kwargs={"pk": "call_pk"}),
    R(
        "secret-list",
        {"GET": VIEWER, "POST": ADMIN},
        NAMED,
        body={"name": "NEW_ONE", "value": "v", **ORG},
    ),
    R(
        "secret-detail",
        {"GET": VIEWER, "PUT": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN},
        kwargs={"pk": "secret_pk"},
        body={"value": "overwritten"},
    ),
    R("api:catch-all", {"GET": NOWHERE, "POST": NOWHERE}, CURRENT),
]
TABLE = {line.name: line for line in EXPECTED}


# ---- the routes, from the URL configuration ----


def _walk(patterns, prefix="", namespace=None):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(
                pattern.url_patterns, prefix + str(pattern.pattern), pattern.namespace or namespace
            )
        else:
            yield prefix + str(pattern.pattern), namespace, pattern


def routes() -> dict[str, tuple[str, URLPattern]]:
    """{name: (route, pattern)} for every route outside Django's admin (which checks staff
    status itself). The router's `.<format>` twins of /api/ routes are the same views."""
    found = {}
    for route, namespace, pattern in _walk(get_resolver().url_patterns):
        if route.startswith("admin/") or "(?P<format>" in route:
            continue
        if pattern.name:
            name = f"{namespace}:{pattern.name}" if namespace else pattern.name
        else:
            name = "api:catch-all" if route.startswith("api/") else route
        found.setdefault(name, (route, pattern))
    return found


def served_methods(pattern: URLPattern) -> set[str] | None:
    """What a DRF viewset route answers (None for other views: their line says)."""
    actions = getattr(pattern.callback, "actions", None)
    if actions is None:
        return None
    allowed = set(getattr(pattern.callback.cls, "http_method_names", actions))
    return {m.upper() for m in actions if m in allowed} - {"HEAD", "OPTIONS"}


ROUTES = routes()


def unlisted(found: dict) -> str | None:
    missing = sorted(set(found) - set(TABLE))
    if not missing:
        return None
    return (
        "Routes without a line in tests/accounts/test_role_matrix.py EXPECTED (add one line "
        "each, see docs/roles.md): " + ", ".join(f"{n} ({found[n][0]})" for n in missing)
    )


def test_every_route_is_in_the_role_table():
    problem = unlisted(ROUTES)
    assert problem is None, problem


def test_a_route_added_without_a_line_is_named(settings):
    settings.ROOT_URLCONF = "tests.accounts.extra_route_urls"
    from django.urls import clear_url_caches

    clear_url_caches()
    try:
        problem = unlisted(routes())
    finally:
        clear_url_caches()
    assert problem is not None
    assert "dashboard:brand_new_page (brand-new/)" in problem


def test_the_role_table_names_no_route_that_is_gone():
    gone = sorted(set(TABLE) - set(ROUTES))
    assert not gone, f"EXPECTED lines for routes that no longer exist: {', '.join(gone)}"


# ---- the world every route is requested in ----


@pytest.fixture
def world(db):
    def person(email, org=None, role=None):
        person = User.objects.create_user(email, "a long enough password")
        if org is not None:
            Membership.objects.create(organization=org, user=person, role=role)
        return person

    owner = person("owner@target.example")
    org = owner.personal_org
    org.name = "Target Org"
    org.save()
    admin = person("admin@target.example", org, ADMIN)
    member = person("member@target.example", org, MEMBER)
    viewer = person("viewer@target.example", org, VIEWER)
    dave = person("dave@target.example", org, MEMBER)
    outsider = person("outsider@elsewhere.example")

    server = Server.objects.create(organization=org, slug="target-srv", name="target-srv")
    tool = Tool.objects.create(
        server=server,
        name="echo",
        description="Echo.",
        input_schema={"type": "object"},
        config={"content": [{"type": "text", "text": "hi"}]},
    )
    Tool.objects.create(server=server, name="second", description="2.", position=1)
    resource = Resource.objects.create(server=server, uri="test://r", name="r", text="r")
    template = ResourceTemplate.objects.create(
        server=server, uri_template="test://i/{id}", name="i", text="i"
    )
    prompt = Prompt.objects.create(server=server, name="p", description="p", messages=[])
    version = publishing.publish(server, None, user=owner)
    key, _ = ApiKey.issue(org, "target-owner-key", created_by=owner)
    bot = ServiceAccount.objects.create(organization=org, name="target-bot", created_by=owner)
    bot_client = Client.objects.create(
        client_id="gmcp_client_matrixbot",
        kind=Client.SERVICE_ACCOUNT,
        client_name="Matrix runner",
        token_endpoint_auth_method="client_secret_basic",
        service_account=bot,
    )
    trusted = TrustedIssuer.objects.create(
        organization=org,
        name="Target IdP",
        issuer="https://idp.example",
        jwks_url="https://idp.example/jwks",
    )
    secret = Secret.store(org, "TARGET_SECRET", "value")
    provider = Provider.objects.create(
        organization=org,
        key="matrix",
        name="Matrix provider",
        authorization_url="https://as.example/authorize",
        token_url="https://as.example/token",
        client_id="matrix-client",
    )
    connection = Connection.objects.create(
        provider=provider, organization=org, user=owner, access_token_ciphertext=encrypt("t")
    )
    token, _ = PersonalAccessToken.issue(owner, "owner's token")
    call = CallLog.objects.create(
        at=timezone.now(), organization=org, server=server, server_slug=server.slug, method="x"
    )
    mail.outbox.clear()
    task = Task.objects.create(
        organization=org,
        server=server,
        credential=f"key:{key.pk}",
        tool_name="echo",
        ttl_ms=60_000,
        expires_at=timezone.now() + timedelta(hours=1),
    )
    grant = Grant.objects.create(
        user=owner,
        organization=org,
        server=server,
        client=Client.objects.create(client_id="matrix-client", client_name="Matrix app"),
        scope="mcp",
        resource=f"http://testserver/mcp/{server.slug}",
    )
    invitation = services.membership_invite(
        actor=owner, organization=org, email=outsider.email, role=MEMBER
    )
    review = UpstreamReview.objects.create(
        server=server,
        kind=UpstreamReview.NEW,
        url="https://upstream.example/mcp",
        connection={"url": "https://upstream.example/mcp", "transport": "streamable-http"},
        upstream_name="fresh",
        pending={"description": "A new upstream tool."},
        digest="0" * 64,
    )
    token_text = mail.outbox[-1].body.split("/invitations/")[1].split("/")[0]
    return SimpleNamespace(
        org=org,
        org_slug=org.slug,
        people={
            "owner": owner,
            "admin": admin,
            "member": member,
            "viewer": viewer,
            "outsider": outsider,
            "anonymous": None,
        },
        server_slug=server.slug,
        tool_pk=tool.pk,
        resource_pk=resource.pk,
        template_pk=template.pk,
        prompt_pk=prompt.pk,
        part="tools",
        version=version.version,
        owner_key_pk=key.pk,
        service_account_pk=bot.pk,
        service_client_pk=bot_client.pk,
        service_client_id=bot_client.client_id,
        trusted_issuer_pk=trusted.pk,
        secret_pk=secret.pk,
        provider_pk=provider.pk,
        connection_pk=connection.pk,
        owner_token_pk=token.pk,
        call_pk=call.pk,
        task_pk=task.pk,
        grant_pk=grant.pk,
        dave_membership_pk=Membership.objects.get(user=dave, organization=org).pk,
        invitation_pk=invitation.pk,
        invitation_token=token_text,
        upstream_review_pk=review.pk,
    )


def url_of(name: str, line: R, world) -> str:
    if name == "api:catch-all":
        return "/api/no-such-thing/"
    kwargs = {
        k: getattr(world, v) if isinstance(v, str) and hasattr(world, v) else v
        for k, v in line.kwargs.items()
    }
    url = reverse(name, kwargs=kwargs)
    if name == "server-import-":
        url += f"?organization={world.org_slug}"
    return url


def fill(body, world):
    if body is None:
        return {}
    return {
        k: v.replace("{org}", world.org_slug) if isinstance(v, str) else v for k, v in body.items()
    }


def expected(who: str, principal: str, scope: str, method: str) -> str:
    """'allow', 'deny' (403), 'hidden' (404), 'login' (302 to login / 401)."""
    if who == NOWHERE:
        return "hidden"
    if who == BEARER:
        return "bearer"
    if who == PUBLIC or (who == LINK and principal in ("anonymous", "outsider")):
        return "allow"
    if principal == "anonymous":
        return "login"
    if who == USER:
        return "allow"
    if who == LINK:
        return "not-yours"
    if who == ADDRESSEE:
        return "allow" if principal == "outsider" else "not-yours"
    if who == SELF:
        return "allow" if principal == "owner" else "hidden"
    if principal == "outsider":
        if scope == NAMED:
            return "own-org" if method == "GET" else "refused"
        return "own-org" if scope == CURRENT else "hidden"
    return "allow" if RANK[principal] >= RANK[who] else "deny"


def request(client, method, url, body, api: bool):
    kwargs = {"data": body}
    if api:
        kwargs["content_type"] = "application/json"
    elif method != "GET":
        kwargs["content_type"] = "application/x-www-form-urlencoded"
        from urllib.parse import urlencode

        kwargs["data"] = urlencode(body)
    # Every request's writes are undone, so each one meets the same world.
    with transaction.atomic():
        # The static view closes a file response inside the view, which sends request_finished
        # and would close this test's connection mid-transaction; the test client only guards
        # the end of a request (and connects the handler again afterwards).
        request_finished.disconnect(close_old_connections)
        response = getattr(client, method.lower())(url, **kwargs)
        transaction.set_rollback(True)
    return response


def verdict(outcome: str, response, principal: str, api: bool) -> str | None:
    """None when the response matches the expected outcome, else what went wrong."""
    code = response.status_code
    body = (
        response.content.decode(errors="replace")
        if not getattr(response, "streaming", False)
        else ""
    )
    if outcome == "allow" and code in (401, 403, 404, 405):
        return f"expected access, got {code}"
    if outcome == "allow" and code >= 500:
        return f"server error {code}"
    if outcome == "deny" and code != 403:
        return f"expected 403, got {code}"
    if outcome == "bearer" and code != 401:
        return f"expected 401 (a bearer token, not a login), got {code}"
    if outcome == "hidden" and code != 404:
        return f"expected 404, got {code}"
    if outcome == "refused" and code not in (400, 404):
        return f"expected 400 or 404, got {code}"
    if outcome == "not-yours" and code not in (403, 404):
        return f"expected 403 or 404, got {code}"
    if outcome == "login":
        if api and code != 401:
            return f"expected 401, got {code}"
        if not api and not (code == 302 and "/login/" in response["Location"]):
            return f"expected a redirect to log in, got {code}"
    if outcome == "own-org":
        if code >= 500 or code == 405:
            return f"got {code}"
        leaked = [m for m in MARKERS if m in body]
        if leaked:
            return f"the answer shows the target organization's {leaked}"
    return None


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_each_route_answers_each_role_as_the_table_says(name, client, world):
    line = TABLE.get(name)
    assert line is not None, (
        f"Route {name!r} ({ROUTES[name][0]}) has no line in EXPECTED; add one (docs/roles.md)."
    )
    served = served_methods(ROUTES[name][1])
    if served is not None:
        assert served == set(line.methods), (
            f"{name} serves {sorted(served)} but its line lists {sorted(line.methods)}"
        )
    api = ROUTES[name][0].startswith("api/")
    url = url_of(name, line, world)
    failures = []
    for method, who in line.methods.items():
        cases = who if isinstance(who, list) else [Case(who, line.body)]
        for case in cases:
            body = fill(case.body if case.body is not None else line.body, world)
            for principal in PRINCIPALS:
                person = world.people[principal]
                client.logout()
                if person is not None:
                    client.force_login(person)
                    if principal != "outsider":
                        session = client.session
                        session[SESSION_KEY] = world.org.pk
                        session.save()
                response = request(client, method, url, body if method != "GET" else {}, api)
                outcome = expected(case.who, principal, line.scope, method)
                problem = verdict(outcome, response, principal, api)
                if problem:
                    failures.append(f"{method} {url} as {principal} ({case.who}): {problem}")
    assert not failures, "\n".join(failures)
