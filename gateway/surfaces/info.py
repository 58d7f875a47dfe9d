"""`GET /mcp/<slug>` without an event stream: what the server is, as JSON or as a page for people."""

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from mcp_protocol.versions import SUPPORTED

# The HTML info page at /mcp/<slug> (served outside Django): one inline <style>, nothing else.
INFO_PAGE_POLICY = "; ".join(
    [
        "default-src 'none'",
        "style-src 'unsafe-inline'",
        "img-src 'self' data: https:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
INFO_PAGE_HEADERS = (
    ("content-security-policy", INFO_PAGE_POLICY),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
)

_pages = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def counts(snapshot) -> dict:
    return {
        "tools": len(snapshot.tool_list),
        "resources": len(snapshot.resource_list),
        "resourceTemplates": len(snapshot.template_list),
        "prompts": len(snapshot.prompt_list),
    }


def server_info(snapshot, base_url: str | None = None) -> dict:
    """Name, version and counts; with `base_url` (the server's /mcp/<slug> URL) its endpoints."""
    info = {"name": snapshot.server_info["name"]}
    if snapshot.server_info.get("title"):
        info["title"] = snapshot.server_info["title"]
    info["version"] = snapshot.server_info["version"]
    if snapshot.instructions:
        info["instructions"] = snapshot.instructions
    info.update(counts(snapshot))
    info["protocolVersions"] = list(SUPPORTED)
    info["auth"] = snapshot.auth_mode
    if base_url:
        base = base_url.rstrip("/")
        info["endpoints"] = {
            "mcp": base,
            "sse": f"{base}/sse",
            "openapi": f"{base}/openapi.json",
            "discovery": f"{base}/.well-known/mcp.json",
            "tools": f"{base}/tools/{{name}}",
        }
    return info


def wants_html(accept: str | None) -> bool:
    """A browser asks for text/html before JSON; API clients ask for JSON or anything."""
    accept = (accept or "").lower()
    if "text/html" not in accept:
        return False
    json_at = accept.find("application/json")
    return json_at == -1 or accept.find("text/html") < json_at


def info_page(snapshot, base_url: str) -> str:
    """An HTML page saying what the server offers and how to connect a client to it. Every
    user-supplied string is escaped by the template engine."""
    base = base_url.rstrip("/")
    return _pages.get_template("server_info.html").render(
        info=server_info(snapshot, base),
        tools=[
            {"name": tool["name"], "title": tool.get("title"), "description": tool["description"]}
            for tool in snapshot.tool_list
        ],
        url=base,
        needs_key=snapshot.auth_mode != "none",
    )
