from django.contrib import admin

from .models import CallLog, RetentionOverride


@admin.register(CallLog)
class CallLogAdmin(admin.ModelAdmin):
    list_display = ("at", "server_slug", "method", "tool", "outcome", "latency_ms", "client_name")
    list_filter = ("outcome", "surface")
    search_fields = ("server_slug", "tool", "client_name", "key_name")
    date_hierarchy = "at"
    list_select_related = ("organization",)

    # The log is evidence: it is read, never edited by hand.
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(RetentionOverride)
class RetentionOverrideAdmin(admin.ModelAdmin):
    list_display = ("organization", "days")
