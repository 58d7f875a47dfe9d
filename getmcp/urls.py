from django.contrib import admin
from django.urls import include, path

from observability.views import metrics

urlpatterns = [
    path("admin/", admin.site.urls),
    path("metrics", metrics, name="metrics"),
    path("api/", include("api.urls")),
    path("scim/v2/", include("scim.urls")),
    path("", include("oauth.urls")),
    path("", include("accounts.urls")),
    path("", include("inspector.urls")),
    path("", include("audit.urls")),
    path("", include("connections.urls")),
    path("", include("sso.urls")),
    path("", include("dashboard.upstream_urls")),
    path("", include("dashboard.urls")),
]

# JSON under /api/, a plain page elsewhere; 503 with Retry-After when Redis or Postgres is out.
handler500 = "api.errors.server_error"
