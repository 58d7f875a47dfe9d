from django.contrib import admin

from .models import (
    Change,
    Prompt,
    Resource,
    ResourceTemplate,
    SecretReach,
    Server,
    ServerVersion,
    Tool,
    ToolEmbedding,
    UpstreamReview,
)


class PartInline(admin.StackedInline):
    extra = 0
    show_change_link = True
    ordering = ["position", "id"]


class ToolInline(PartInline):
    model = Tool
    fields = ["position", "name", "kind", "enabled", "description"]


class ResourceInline(PartInline):
    model = Resource
    fields = ["position", "uri", "name", "mime_type"]


class ResourceTemplateInline(PartInline):
    model = ResourceTemplate
    fields = ["position", "uri_template", "name", "mime_type"]


class PromptInline(PartInline):
    model = Prompt
    fields = ["position", "name", "description"]


class ServerVersionInline(admin.TabularInline):
    model = ServerVersion
    extra = 0
    fields = ["version", "published_at", "published_by"]
    readonly_fields = fields
    show_change_link = True
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Server)
class ServerAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "organization", "auth_mode", "status", "updated_at"]
    list_filter = ["status", "auth_mode"]
    search_fields = ["slug", "name", "organization__slug"]
    autocomplete_fields = ["organization"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [
        ToolInline,
        ResourceInline,
        ResourceTemplateInline,
        PromptInline,
        ServerVersionInline,
    ]


class PartAdmin(admin.ModelAdmin):
    list_select_related = ["server"]
    autocomplete_fields = ["server"]
    ordering = ["server__slug", "position", "id"]


@admin.register(Tool)
class ToolAdmin(PartAdmin):
    list_display = ["name", "server", "kind", "enabled", "position"]
    list_filter = ["kind", "enabled"]
    search_fields = ["name", "server__slug"]


@admin.register(Resource)
class ResourceAdmin(PartAdmin):
    list_display = ["uri", "name", "server", "mime_type", "position"]
    search_fields = ["uri", "name", "server__slug"]


@admin.register(ResourceTemplate)
class ResourceTemplateAdmin(PartAdmin):
    list_display = ["uri_template", "name", "server", "position"]
    search_fields = ["uri_template", "name", "server__slug"]


@admin.register(Prompt)
class PromptAdmin(PartAdmin):
    list_display = ["name", "server", "position"]
    search_fields = ["name", "server__slug"]


@admin.register(ServerVersion)
class ServerVersionAdmin(admin.ModelAdmin):
    list_display = ["server", "version", "published_at", "published_by"]
    search_fields = ["server__slug", "version"]
    readonly_fields = ["server", "version", "definition", "published_at", "published_by"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Change)
class ChangeAdmin(admin.ModelAdmin):
    """The change log every process re-reads (servers/invalidation.py): read-only, for
    operators checking that a revocation or pause was recorded."""

    list_display = ["created_at", "kind", "subject", "txid"]
    list_filter = ["kind"]
    search_fields = ["subject"]
    ordering = ["-id"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(UpstreamReview)
class UpstreamReviewAdmin(admin.ModelAdmin):
    list_display = ("server", "upstream_name", "kind", "state", "created_at", "decided_by")
    list_filter = ("kind", "state")
    list_select_related = ("server", "decided_by")
    readonly_fields = ("approved", "pending", "digest", "decided_at", "decided_by")


@admin.register(ToolEmbedding)
class ToolEmbeddingAdmin(admin.ModelAdmin):
    """Derived data (recomputed at publish when missing): read-only, for looking only."""

    list_display = ["digest", "created_at"]
    search_fields = ["digest"]
    readonly_fields = ["digest", "vector", "created_at"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(SecretReach)
class SecretReachAdmin(admin.ModelAdmin):
    """Read-only: approvals are given in the dashboard and the API, where they are audited."""

    list_display = ("server", "tool", "secrets", "approved_by", "approved_at")
    search_fields = ("server__slug", "tool")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
