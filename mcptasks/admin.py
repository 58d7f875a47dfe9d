from django.contrib import admin

from .models import Task


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    """Read-only: a task's state belongs to its worker and its client, not to staff edits."""

    list_display = ("id", "tool_name", "server", "organization", "status", "created_at")
    list_filter = ("status",)
    search_fields = ("id", "tool_name", "server__slug")
    list_select_related = ("server", "organization")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
