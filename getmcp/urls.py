from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("api.urls")),
    path("", include("oauth.urls")),
    path("", include("accounts.urls")),
    path("", include("dashboard.urls")),
]

# JSON under /api/, a plain page elsewhere; 503 with Retry-After when Redis or Postgres is out.
handler500 = "api.errors.server_error"
