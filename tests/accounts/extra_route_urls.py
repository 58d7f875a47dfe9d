"""The project's URLs plus one route nobody listed in the role table (see test_role_matrix)."""

from django.http import HttpResponse
from django.urls import include, path

from getmcp.urls import urlpatterns as project

urlpatterns = [
    *project,
    path(
        "",
        include(
            ([path("brand-new/", lambda r: HttpResponse(), name="brand_new_page")], "dashboard")
        ),
    ),
]
