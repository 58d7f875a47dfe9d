from django.urls import path

from . import views

app_name = "connections"

urlpatterns = [
    path("connections/connect/<str:elicitation_id>/", views.connect, name="connect"),
    path("connections/callback/", views.callback, name="callback"),
]
