from django.apps import AppConfig


class DashboardConfig(AppConfig):
    # An app so Django finds its template tags (templatetags/); it has no models.
    name = "dashboard"
