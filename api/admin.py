from django.contrib import admin
from rest_framework.request import Request

from .models import PersonalAccessToken


@admin.register(PersonalAccessToken)
class PersonalAccessTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "user", "created_at", "last_used_at", "revoked_at")
    search_fields = ("prefix", "name", "user__email")
    readonly_fields = ("user", "prefix", "created_at", "last_used_at")
    exclude = ("digest",)
    actions = ["revoke"]

    def has_add_permission(self, request: Request) -> bool:
        # A token is only useful with its raw value, which the admin could never show.
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: Request, queryset) -> None:
        for token in queryset:
            token.revoke()
