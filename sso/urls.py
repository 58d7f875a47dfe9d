from django.urls import path

from . import views

app_name = "sso"

urlpatterns = [
    path("sso/", views.start, name="start"),
    path("sso/callback/", views.callback, name="callback"),
    path("sso/o/<slug:slug>/", views.begin, name="begin"),
    path("organization/sso/", views.settings_page, name="settings"),
]
