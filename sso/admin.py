from django.contrib import admin

from .models import Connection, Identity


@admin.register(Connection)
class ConnectionAdmin(admin.ModelAdmin):
    list_display = ("organization", "issuer", "client_id", "required", "enabled", "updated_at")
    list_filter = ("required", "enabled")
    search_fields = ("organization__name", "organization__slug", "issuer", "client_id")
    # The secret's ciphertext is not a form field (editable=False): set it in the dashboard.
    readonly_fields = ("created_at", "updated_at")


@admin.register(Identity)
class IdentityAdmin(admin.ModelAdmin):
    list_display = ("email", "subject", "connection", "user", "last_sign_in_at")
    search_fields = ("email", "subject", "user__email")
    readonly_fields = ("created_at", "last_sign_in_at")
