from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.utils import timezone

from .models import ApiKey, Invitation, Membership, Organization, ServiceAccount, User


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    list_display = ["email", "name", "is_active", "is_staff", "date_joined"]
    list_filter = ["is_active", "is_staff", "is_superuser"]
    search_fields = ["email", "name"]
    readonly_fields = ["date_joined", "last_login"]
    autocomplete_fields = ["personal_org"]
    fieldsets = [
        (None, {"fields": ["email", "password", "name", "personal_org"]}),
        ("Permissions", {"fields": ["is_active", "is_staff", "is_superuser", "groups"]}),
        ("Dates", {"fields": ["date_joined", "last_login"]}),
    ]
    add_fieldsets = [
        (None, {"classes": ["wide"], "fields": ["email", "password1", "password2"]}),
    ]
    filter_horizontal = ["groups"]


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "billing_owner", "created_at"]
    search_fields = ["name", "slug", "billing_owner__email"]
    autocomplete_fields = ["billing_owner"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "organization", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["user__email", "organization__slug"]
    autocomplete_fields = ["user", "organization"]


@admin.register(ServiceAccount)
class ServiceAccountAdmin(admin.ModelAdmin):
    list_display = ["name", "organization", "role", "created_at", "disabled_at"]
    list_filter = ["role"]
    search_fields = ["name", "organization__slug"]
    autocomplete_fields = ["organization"]
    readonly_fields = ["created_by", "created_at"]


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    """Read-only: invitations are sent from the dashboard (the link exists only in the email)."""

    list_display = ["email", "organization", "role", "state", "created_at", "expires_at"]
    list_filter = ["state", "role"]
    search_fields = ["email", "organization__slug"]
    readonly_fields = [
        "organization",
        "email",
        "role",
        "invited_by",
        "state",
        "created_at",
        "expires_at",
        "responded_at",
        "responded_by",
    ]
    exclude = ["nonce_digest"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "organization", "last_used_at", "state"]
    list_filter = ["revoked_at"]
    search_fields = ["prefix", "name", "organization__slug"]
    readonly_fields = ["prefix", "digest", "created_by", "created_at", "last_used_at", "revoked_at"]
    fields = ["organization", "name", "servers", "expires_at", *readonly_fields]
    filter_horizontal = ["servers"]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        # A key made here would have no raw value anyone could ever see: issue keys with
        # `manage.py apikey create` or the dashboard, which show it once.
        return False

    @admin.display(description="state")
    def state(self, key) -> str:
        if key.revoked_at is not None:
            return "revoked"
        if key.expires_at is not None and key.expires_at <= timezone.now():
            return "expired"
        return "active"

    @admin.action(description="Revoke the selected keys")
    def revoke(self, request, queryset) -> None:
        count = 0
        for key in queryset.filter(revoked_at__isnull=True):
            key.revoke()  # one save each, so each key's cache generation is bumped
            count += 1
        self.message_user(request, f"Revoked {count} key(s).", messages.SUCCESS)
