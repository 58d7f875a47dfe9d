from django.urls import path

from .views import upstream as views

app_name = "upstream"

urlpatterns = [
    path("servers/<slug:slug>/upstream-tools/", views.add_tools, name="add_tools"),
    path("servers/<slug:slug>/upstream-changes/", views.reviews, name="reviews"),
    path(
        "servers/<slug:slug>/upstream-changes/<int:pk>/approve/",
        views.review_approve,
        name="review_approve",
    ),
    path(
        "servers/<slug:slug>/upstream-changes/<int:pk>/reject/",
        views.review_reject,
        name="review_reject",
    ),
    path(
        "servers/<slug:slug>/upstream-changes/auto-approve/",
        views.auto_approve,
        name="auto_approve",
    ),
]
