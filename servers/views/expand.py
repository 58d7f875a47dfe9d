"""Views into what the protocol carries, when a definition is compiled: each tool's `view`
becomes a `ui://` resource of kind `view`, and the tool's `_meta.ui.resourceUri` names it.

The URI ends in a digest of what the document is made from, so a changed view is a new resource
and a host that cached the old document (hosts may) fetches the new one."""

import hashlib

import orjson

from .spec import APP_MIME_TYPE

URI_PREFIX = "ui://views/"
CSP_ALWAYS = ("connectDomains", "resourceDomains")


def view_uri(tool_name: str, view: dict, form_tool: dict | None = None) -> str:
    made_of = orjson.dumps([view, form_tool], option=orjson.OPT_SORT_KEYS)
    digest = hashlib.blake2b(made_of, digest_size=6).hexdigest()
    return f"{URI_PREFIX}{tool_name}/{digest}"


def resource_meta(view: dict) -> dict:
    """The resource's `_meta.ui`: its policy, always stated (ChatGPT refuses a view whose policy
    is unset), the permissions it asks for, its border and dedicated origin when given."""
    declared = view.get("csp") or {}
    csp = {key: list(declared.get(key) or []) for key in CSP_ALWAYS}
    csp.update({key: list(value) for key, value in declared.items() if value and key not in csp})
    ui: dict = {"csp": csp, "prefersBorder": view.get("prefersBorder", True)}
    if view.get("permissions"):
        ui["permissions"] = dict(view["permissions"])
    if view.get("domain"):
        ui["domain"] = view["domain"]
    return {"ui": ui}


def _form_tool(view: dict, tools_by_name: dict) -> dict | None:
    if view.get("template") != "form":
        return None
    tool = tools_by_name.get(view.get("tool"))
    if tool is None:
        return None
    keys = ("name", "title", "description", "inputSchema")
    return {key: tool[key] for key in keys if key in tool}


def expand_views(definition: dict) -> dict:
    """The definition with its views as resources and tool metadata; itself when it has none."""
    tools = definition.get("tools") or []
    if not any(tool.get("view") and tool.get("enabled", True) for tool in tools):
        return definition
    tools_by_name = {tool.get("name"): tool for tool in tools}
    new_tools, view_resources = [], []
    for tool in tools:
        view = tool.get("view")
        if not view or not tool.get("enabled", True):
            new_tools.append(tool)
            continue
        form_tool = _form_tool(view, tools_by_name)
        uri = view_uri(tool["name"], view, form_tool)
        meta = dict(tool.get("_meta") or {})
        meta["ui"] = {**(meta.get("ui") or {}), "resourceUri": uri}
        new_tools.append({**tool, "_meta": meta})
        view_resources.append(
            {
                "uri": uri,
                "name": f"{tool['name']} view",
                "title": view.get("title") or tool.get("title") or tool["name"],
                "description": f"How the result of {tool['name']} is shown.",
                "mimeType": APP_MIME_TYPE,
                "_meta": resource_meta(view),
                "kind": "view",
                "config": {"view": view, "formTool": form_tool, "toolName": tool["name"]},
            }
        )
    resources = [*(definition.get("resources") or []), *view_resources]
    return {**definition, "tools": new_tools, "resources": resources}
