from django.urls import path

from . import views

app_name = "audit"

urlpatterns = [
    path("organization/audit/", views.audit_log, name="log"),
    path("organization/audit.csv", views.audit_log_csv, name="log_csv"),
]
