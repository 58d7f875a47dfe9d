from django.contrib import admin

from .models import AuditAnchor, AuditEvent


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnly):
    list_display = ("at", "organization_id", "actor_label", "action", "target_type", "target_label")
    list_filter = ("action", "actor_type")
    search_fields = ("actor_label", "target_label", "action")


@admin.register(AuditAnchor)
class AuditAnchorAdmin(ReadOnly):
    list_display = ("organization_id", "first_id", "purged_at")
