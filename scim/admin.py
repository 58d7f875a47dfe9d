from django.contrib import admin

from .models import Directory, ScimGroup, ScimUser


@admin.register(Directory)
class DirectoryAdmin(admin.ModelAdmin):
    list_display = ["organization", "token_prefix", "token_created_at", "default_role"]
    search_fields = ["organization__slug", "organization__name"]
    # The digest is never shown or edited here: tokens are made in the dashboard or the API.
    exclude = ["token_digest"]
    readonly_fields = ["token_prefix", "token_created_at"]
    autocomplete_fields = ["organization"]


@admin.register(ScimUser)
class ScimUserAdmin(admin.ModelAdmin):
    list_display = ["user_name", "organization", "active", "external_id", "updated_at"]
    list_filter = ["active"]
    search_fields = ["user_name", "external_id", "organization__slug"]
    readonly_fields = ["uid"]
    autocomplete_fields = ["organization", "user"]


@admin.register(ScimGroup)
class ScimGroupAdmin(admin.ModelAdmin):
    list_display = ["display_name", "organization", "external_id", "updated_at"]
    search_fields = ["display_name", "organization__slug"]
    readonly_fields = ["uid"]
    autocomplete_fields = ["organization"]
    filter_horizontal = ["members"]
