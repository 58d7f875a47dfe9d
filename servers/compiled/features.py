"""What a server uses that clients negotiate as extensions."""

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
APPS_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"


def uses_tasks(snapshot) -> bool:
    return any(tool.task_support in ("optional", "required") for tool in snapshot.tools.values())


def _is_app(item: dict) -> bool:
    uri = item.get("uri") or item.get("uriTemplate") or ""
    return uri.startswith("ui://") and item.get("mimeType") == APP_MIME_TYPE


def uses_apps(snapshot) -> bool:
    """MCP Apps: at least one ui:// resource of type text/html;profile=mcp-app."""
    return any(_is_app(item) for item in (*snapshot.resource_list, *snapshot.template_list))


def extensions(snapshot) -> dict:
    """The `capabilities.extensions` a server advertises: only what it actually uses."""
    found = {}
    if uses_apps(snapshot):
        found[APPS_EXTENSION] = {"mimeTypes": [APP_MIME_TYPE]}
    if uses_tasks(snapshot):
        found[TASKS_EXTENSION] = {}
    return found
