"""The format's fields: which wire keys each part has, their model fields and defaults, and the
patterns names and slugs follow."""

import re

from ..models import SLUG_RE, TOOL_NAME_RE, Prompt, Resource, ResourceTemplate, Server, Tool

# --- the format's fields --------------------------------------------------------------------------

# (wire key, model field, default). A field equal to its default is left out of an export;
# ALWAYS keys are written even then, so an exported file says what it means.
SERVER_FIELDS = [
    ("slug", "slug", None),
    ("name", "name", None),
    ("title", "title", ""),
    ("version", "version", "1.0.0"),
    ("instructions", "instructions", ""),
    ("icons", "icons", []),
    ("auth", "auth_mode", Server.AUTH_API_KEY),
    ("status", "status", Server.ACTIVE),
    ("allowedOrigins", "allowed_origins", []),
    ("http", "http", {}),
    ("code", "code", {}),
    ("rateLimitPerMinute", "rate_limit_per_minute", 0),
    ("logArguments", "log_arguments", False),
    ("agents", "agents", {}),
    ("roleAccess", "role_access", {}),
]
SERVER_ALWAYS = {"slug", "name", "version", "auth", "status"}
LISTS = ["tools", "resources", "resourceTemplates", "prompts"]

TOOL_FIELDS = [
    ("name", "name", None),
    ("title", "title", ""),
    ("description", "description", None),
    ("inputSchema", "input_schema", None),
    ("outputSchema", "output_schema", None),
    ("annotations", "annotations", {}),
    ("icons", "icons", []),
    ("execution", "execution", {}),
    ("_meta", "meta", {}),
    ("enabled", "enabled", True),
    ("pinned", "pinned", False),
    ("outputBudget", "output_budget", {}),
    ("view", "view", {}),
    ("kind", "kind", "static"),
    ("config", "config", {}),
]
TOOL_ALWAYS = {"name", "description", "inputSchema", "kind"}

RESOURCE_FIELDS = [
    ("uri", "uri", None),
    ("name", "name", None),
    ("title", "title", ""),
    ("description", "description", ""),
    ("mimeType", "mime_type", ""),
    ("text", "text", None),
    ("blob", "blob", None),
    ("size", "size", None),
    ("annotations", "annotations", {}),
    ("icons", "icons", []),
    ("_meta", "meta", {}),
    ("kind", "kind", "static"),
    ("config", "config", {}),
]
RESOURCE_ALWAYS = {"uri", "name"}

TEMPLATE_FIELDS = [
    ("uriTemplate", "uri_template", None),
    ("name", "name", None),
    ("title", "title", ""),
    ("description", "description", ""),
    ("mimeType", "mime_type", ""),
    ("text", "text", None),
    ("blob", "blob", None),
    ("completions", "completions", {}),
    ("annotations", "annotations", {}),
    ("icons", "icons", []),
    ("_meta", "meta", {}),
]
TEMPLATE_ALWAYS = {"uriTemplate", "name"}

PROMPT_FIELDS = [
    ("name", "name", None),
    ("title", "title", ""),
    ("description", "description", ""),
    ("arguments", "arguments", []),
    ("messages", "messages", []),
    ("completions", "completions", {}),
    ("icons", "icons", []),
    ("_meta", "meta", {}),
    ("kind", "kind", "static"),
    ("config", "config", {}),
]
PROMPT_ALWAYS = {"name", "description"}

PARTS = {
    # wire list -> (model, fields, always-written keys, related name on Server)
    "tools": (Tool, TOOL_FIELDS, TOOL_ALWAYS, "tools"),
    "resources": (Resource, RESOURCE_FIELDS, RESOURCE_ALWAYS, "resources"),
    "resourceTemplates": (ResourceTemplate, TEMPLATE_FIELDS, TEMPLATE_ALWAYS, "resource_templates"),
    "prompts": (Prompt, PROMPT_FIELDS, PROMPT_ALWAYS, "prompts"),
}

TASK_SUPPORT = {"forbidden", "optional", "required"}
ROLES = {"user", "assistant"}
CONTENT_TYPES = {"text", "image", "audio", "resource", "resource_link"}
_SLUG = re.compile(SLUG_RE)
_TOOL_NAME = re.compile(TOOL_NAME_RE)
_ORIGIN = re.compile(r"^https?://[^/\s?#]+$")
_TEMPLATE_VAR = re.compile(r"\{[+#./;?&]?([^{}]+)\}")
