from django.urls import path

from . import views

app_name = "inspector"
urlpatterns = [
    path("servers/<slug:slug>/inspector/", views.inspector, name="inspector"),
]
