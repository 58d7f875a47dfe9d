"""`kind: static`: a result written in the definition, its strings templated over the arguments."""

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import orjson

from mcp_protocol.context import RequestContext

from ..templating import TemplateCompileError, compile_value, render_text
from .contract import TemplateScope, ToolKind

# Fields each content block must have, by type (MCP ContentBlock).
CONTENT_REQUIRED = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource": ("resource",),
    "resource_link": ("uri", "name"),
}


def validate_content_blocks(blocks: Any, path: str) -> list[str]:
    if not isinstance(blocks, list):
        return [f"{path}: must be a list of content blocks"]
    errors = []
    for index, block in enumerate(blocks):
        where = f"{path}[{index}]"
        if not isinstance(block, dict):
            errors.append(f"{where}: must be a mapping")
            continue
        kind = block.get("type")
        if kind not in CONTENT_REQUIRED:
            errors.append(f"{where}.type: must be one of {', '.join(CONTENT_REQUIRED)}")
            continue
        errors.extend(
            f"{where}.{field}: required" for field in CONTENT_REQUIRED[kind] if field not in block
        )
        if kind == "resource" and isinstance(block.get("resource"), dict):
            resource = block["resource"]
            if "uri" not in resource:
                errors.append(f"{where}.resource.uri: required")
            if ("text" in resource) == ("blob" in resource):
                errors.append(f"{where}.resource: needs exactly one of text or blob")
        elif kind == "resource" and "resource" in block:
            errors.append(f"{where}.resource: must be a mapping")
    return errors


def normalize_content(blocks: Any) -> Any:
    """Text fields of rendered blocks as strings: a lone `{{ n }}` renders to a native number."""
    if not isinstance(blocks, list):
        return blocks
    for block in blocks:
        if not isinstance(block, dict):
            continue
        for key in ("text", "data", "uri", "mimeType"):
            if key in block and not isinstance(block[key], str):
                block[key] = render_text(block[key])
        resource = block.get("resource")
        if isinstance(resource, dict):
            for key in ("text", "blob", "uri"):
                if key in resource and not isinstance(resource[key], str):
                    resource[key] = render_text(resource[key])
    return blocks


def validate_result(spec: dict[str, Any], path: str) -> list[str]:
    """Checks for a result spec: {content, structuredContent?, isError?} (static and `return`)."""
    errors = []
    if "content" in spec:
        errors.extend(validate_content_blocks(spec["content"], f"{path}.content"))
    elif "structuredContent" not in spec:
        errors.append(f"{path}.content: required")
    if "isError" in spec and not isinstance(spec["isError"], bool | str):
        errors.append(f"{path}.isError: must be true or false")
    unknown = set(spec) - {"content", "structuredContent", "isError"}
    errors.extend(f"{path}.{key}: unknown field" for key in sorted(unknown))
    return errors


def validate_config(config: dict[str, Any]) -> list[str]:
    if not isinstance(config, dict):
        return ["config: must be a mapping"]
    return validate_result(config, "config") + _template_errors(config, "config")


def _template_errors(value: Any, path: str) -> list[str]:
    try:
        compile_value(value)
    except TemplateCompileError as exc:
        return [f"{path}: {exc}"]
    return []


@dataclass(frozen=True, slots=True)
class ResultTemplate:
    render: Callable[[dict[str, Any]], dict[str, Any]]
    has_content: bool
    has_structured: bool

    def build(self, variables: dict[str, Any]) -> dict[str, Any]:
        rendered = self.render(variables)
        result: dict[str, Any] = {"content": normalize_content(rendered.get("content", []))}
        if self.has_structured:
            result["structuredContent"] = rendered["structuredContent"]
            if not self.has_content:
                # Clients that ignore structuredContent still see the data (tools.mdx).
                text = orjson.dumps(result["structuredContent"]).decode()
                result["content"] = [{"type": "text", "text": text}]
        is_error = rendered.get("isError", False)
        if isinstance(is_error, str):
            is_error = is_error.strip().lower() in ("true", "1", "yes")
        if is_error:
            result["isError"] = True
        return result


def compile_result(spec: dict[str, Any]) -> ResultTemplate:
    return ResultTemplate(
        render=compile_value(spec),
        has_content="content" in spec,
        has_structured="structuredContent" in spec,
    )


def compile(tool_def: dict[str, Any]) -> ResultTemplate:
    return compile_result(tool_def.get("config") or {})


async def call(
    compiled: ResultTemplate, arguments: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    return compiled.build(dict(arguments))


class StaticKind(ToolKind):
    name = "static"
    label = "Static"
    template_scope = TemplateScope.RESULT
    config_example = MappingProxyType(
        {"content": [{"type": "text", "text": "You said: {{ message }}"}]}
    )

    def validate_config(self, config: dict[str, Any]) -> list[str]:
        return validate_config(config)

    def compile(self, tool_def: dict[str, Any]) -> ResultTemplate:
        return compile(tool_def)

    async def call(
        self, compiled: ResultTemplate, arguments: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        return await call(compiled, arguments, ctx)


KIND = StaticKind()
