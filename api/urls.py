from django.urls import path, re_path
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from audit.api import AuditLogView
from sso.api import ConnectionView as SsoConnectionView

from .connected_accounts import ConnectionViewSet
from .connections import ProviderViewSet
from .errors import not_found
from .machine_access import TrustedIssuerViewSet
from .service_accounts import ServiceAccountViewSet
from .views.calls import CallCsvView, CallViewSet
from .views.docs import SchemaView
from .views.keys import KeyViewSet, TokenViewSet
from .views.members import MemberDetailView, MemberListView
from .views.organizations import OrganizationViewSet
from .views.parts import PromptViewSet, ResourceTemplateViewSet, ResourceViewSet, ToolViewSet
from .views.scim import ScimSettingsView, ScimTokenView
from .views.secrets import SecretViewSet
from .views.servers import SLUG_PATTERN, ServerViewSet, VersionViewSet

SCHEMA_SETTINGS = {
    "TITLE": "getmcp management API",
    "DESCRIPTION": (
        "Manage servers, their tools, resources, prompts, API keys and call logs. "
        "Authenticate with `Authorization: Token gpat_…` (a personal access token; "
        "`Bearer gpat_…` works too). Errors look like "
        '`{"error": {"code", "message", "fields"}}`.'
    ),
    "VERSION": "1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/",
}

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("organizations", OrganizationViewSet, basename="organization")
router.register("servers", ServerViewSet, basename="server")
server = rf"servers/(?P<server_slug>{SLUG_PATTERN})"
router.register(f"{server}/tools", ToolViewSet, basename="server-tool")
router.register(f"{server}/resources", ResourceViewSet, basename="server-resource")
router.register(
    f"{server}/resource-templates", ResourceTemplateViewSet, basename="server-resource-template"
)
router.register(f"{server}/prompts", PromptViewSet, basename="server-prompt")
router.register(f"{server}/versions", VersionViewSet, basename="server-version")
router.register("keys", KeyViewSet, basename="key")
router.register("service-accounts", ServiceAccountViewSet, basename="service-account")
router.register("identity-providers", TrustedIssuerViewSet, basename="trusted-issuer")
router.register("tokens", TokenViewSet, basename="token")
router.register("calls", CallViewSet, basename="call")
router.register("secrets", SecretViewSet, basename="secret")
router.register("connection-providers", ProviderViewSet, basename="connection-provider")
router.register("connections", ConnectionViewSet, basename="connection")

urlpatterns = [
    path(
        "schema/",
        SchemaView.as_view(custom_settings=SCHEMA_SETTINGS),
        name="api-schema",
    ),
    # Swagger UI from this site's /static/ (drf-spectacular-sidecar); the split view serves its
    # start-up script as a file, so the page runs under a policy with no inline script.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("calls.csv", CallCsvView.as_view(), name="calls-csv"),
    path("organizations/<slug:slug>/audit/", AuditLogView.as_view(), name="organization-audit"),
    path("organizations/<slug:slug>/sso/", SsoConnectionView.as_view(), name="organization-sso"),
    path(
        "organizations/<slug:slug>/members/",
        MemberListView.as_view(),
        name="organization-members",
    ),
    path(
        "organizations/<slug:slug>/members/<int:pk>/",
        MemberDetailView.as_view(),
        name="organization-member",
    ),
    path("organizations/<slug:slug>/scim/", ScimSettingsView.as_view(), name="organization-scim"),
    path(
        "organizations/<slug:slug>/scim/token/",
        ScimTokenView.as_view(),
        name="organization-scim-token",
    ),
    *router.urls,
    re_path(r"^", not_found),
]
