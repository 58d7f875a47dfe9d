"""`GET /mcp/<slug>/openapi.json`: OpenAPI 3.1 of the server's REST tool calls.

Each tool is `POST /tools/<name>` with its inputSchema as the request body. Tool schemas are JSON
Schema 2020-12, which OpenAPI 3.1 uses as is; each one lives under components/schemas and its
local `$ref`s ("#/$defs/...") are re-rooted there so they still resolve inside this document.
"""

import re

from .results import value_schema

ERROR_SCHEMA = {
    "type": "object",
    "properties": {"error": {"type": "string"}},
    "required": ["error"],
}
VALIDATION_ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "message": {"type": "string"}},
                "required": ["path", "message"],
            },
        },
    },
    "required": ["error"],
}


def _operation_id(name: str, taken: set) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", name) or "tool"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    taken.add(candidate)
    return candidate


def _rerooted(schema, root: str):
    """A copy of `schema` whose document-local refs point into `root` instead of "#"."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#"):
                out[key] = root + value[1:]
            else:
                out[key] = _rerooted(value, root)
        return out
    if isinstance(schema, list):
        return [_rerooted(item, root) for item in schema]
    return schema


def _component(schema: dict, name: str) -> dict:
    schema = {k: v for k, v in schema.items() if k != "$schema"}
    return _rerooted(schema, f"#/components/schemas/{name}")


def _json(schema) -> dict:
    return {"application/json": {"schema": schema}}


def openapi_document(snapshot, base_url: str) -> dict:
    """`base_url` is the server's own URL (…/mcp/<slug>, or …/mcp/<slug>@<version>)."""
    needs_key = snapshot.auth_mode != "none"
    schemas = {
        "Error": ERROR_SCHEMA,
        "ValidationError": VALIDATION_ERROR_SCHEMA,
    }
    paths = {}
    taken: set = set()
    for wire in snapshot.tool_list:
        tool = snapshot.tools[wire["name"]]
        op = _operation_id(tool.name, taken)
        schemas[f"{op}_input"] = _component(wire["inputSchema"], f"{op}_input")
        result = value_schema(tool)
        if tool.output_validator is not None:
            schemas[f"{op}_output"] = _component(result, f"{op}_output")
            result = {"$ref": f"#/components/schemas/{op}_output"}
        responses = {
            "200": {
                "description": "The tool's result",
                "content": _json(
                    {
                        "type": "object",
                        "properties": {"result": result},
                        "required": ["result"],
                    }
                ),
            },
            "400": {
                "description": "The arguments do not match the tool's input schema",
                "content": _json({"$ref": "#/components/schemas/ValidationError"}),
            },
            "404": {
                "description": "No such tool",
                "content": _json({"$ref": "#/components/schemas/Error"}),
            },
            "500": {
                "description": "The tool failed",
                "content": _json({"$ref": "#/components/schemas/Error"}),
            },
        }
        if needs_key:
            responses["401"] = {"description": "A valid API key is required"}
        operation = {
            "operationId": op,
            "summary": wire.get("title") or tool.name,
            "requestBody": {
                "required": True,
                "content": _json({"$ref": f"#/components/schemas/{op}_input"}),
            },
            "responses": responses,
        }
        if wire.get("description"):
            operation["description"] = wire["description"]
        paths[f"/tools/{tool.name}"] = {"post": operation}

    document = {
        "openapi": "3.1.0",
        "info": {
            "title": snapshot.server_info.get("title") or snapshot.server_info["name"],
            "version": snapshot.server_info["version"],
        },
        "servers": [{"url": base_url.rstrip("/") or "/"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }
    if snapshot.instructions:
        document["info"]["description"] = snapshot.instructions
    if needs_key:
        document["components"]["securitySchemes"] = {
            "apiKey": {"type": "http", "scheme": "bearer", "description": "An API key (gmcp_…)"}
        }
        document["security"] = [{"apiKey": []}]
    return document
