"""Read-only admin views of the authorization server's state (digests only, never tokens)."""

from django.contrib import admin

from .models import AccessToken, AuthorizationCode, Client, Grant, RefreshToken, TrustedIssuer


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Client)
class ClientAdmin(ReadOnly):
    list_display = (
        "client_name",
        "client_id",
        "kind",
        "service_account",
        "created_at",
        "first_used_at",
    )
    list_filter = ("kind",)
    list_select_related = ("service_account",)
    search_fields = ("client_name", "client_id")


@admin.register(Grant)
class GrantAdmin(ReadOnly):
    list_display = (
        "client",
        "user",
        "service_account",
        "source",
        "server",
        "scope",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("source",)
    list_select_related = ("client", "user", "service_account", "server")
    search_fields = ("user__email", "server__slug", "client__client_name")


@admin.register(AuthorizationCode)
class AuthorizationCodeAdmin(ReadOnly):
    list_display = ("grant", "expires_at", "used_at")
    list_select_related = ("grant__client", "grant__user", "grant__server")


@admin.register(AccessToken)
class AccessTokenAdmin(ReadOnly):
    list_display = ("grant", "created_at", "expires_at", "revoked_at")
    list_select_related = ("grant__client", "grant__user", "grant__server")


@admin.register(RefreshToken)
class RefreshTokenAdmin(ReadOnly):
    list_display = ("grant", "created_at", "expires_at", "rotated_at")
    list_select_related = ("grant__client", "grant__user", "grant__server")


@admin.register(TrustedIssuer)
class TrustedIssuerAdmin(ReadOnly):
    """Read-only here: changes go through oauth/trust.py (policy, audit, revoking grants)."""

    list_display = ("name", "issuer", "organization", "enabled", "created_at")
    list_filter = ("enabled",)
    list_select_related = ("organization",)
    search_fields = ("name", "issuer", "organization__slug")
