"""Compiling a definition dict (the server-as-code format) into a Snapshot; raises
DefinitionError naming the offending field."""

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from mcp_protocol import uritemplate
from mcp_protocol.param_headers import header_parameters
from mcp_protocol.schemas import BoundedValidator, external_refs, schema_problems, validator_for
from servers.discovery.config import char_limit
from servers.discovery.config import read as read_agent_settings

from .. import kinds, prompts, resources
from ..kinds import workflow
from ..templating import TemplateCompileError, compile_value
from ..views import expand_views
from .features import APP_MIME_TYPE
from .frozen import freeze, interned
from .snapshot import (
    CAPABILITIES,
    DEFAULT_INPUT_SCHEMA,
    TASK_SUPPORT,
    CompiledPrompt,
    CompiledResource,
    CompiledResourceTemplate,
    CompiledTool,
    DefinitionError,
    Snapshot,
)


def _optional(source: dict, keys) -> dict:
    """The keys of `source` that carry something (empty strings, lists and maps are left out)."""
    return {key: source[key] for key in keys if source.get(key) not in (None, "", [], {})}


def _validator(schema, where: str) -> BoundedValidator:
    if not isinstance(schema, dict):
        raise DefinitionError(f"{where}: must be a JSON Schema object")
    problems = schema_problems(schema)
    if problems:
        at, message = problems[0]
        at = f"{at.lstrip('.')}: " if at else ""
        raise DefinitionError(f"{where}: not a valid JSON Schema ({at}{message})")
    remote = external_refs(schema)
    if remote:
        raise DefinitionError(f"{where}.{remote[0]}: remote $refs are not allowed")
    return validator_for(schema)


def _compile_tool(tool: dict, where: str, server: dict) -> CompiledTool:
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise DefinitionError(f"{where}.name: required")
    try:
        kind = kinds.get_kind(tool.get("kind", kinds.DEFAULT_KIND))
    except ValueError as exc:
        raise DefinitionError(f"{where}.kind: {exc}") from None
    config = tool.get("config") or {}
    problems = kind.validate_config(config)
    if problems:
        raise DefinitionError("; ".join(f"{where}.{problem}" for problem in problems))
    input_schema = tool.get("inputSchema") or DEFAULT_INPUT_SCHEMA
    output_schema = tool.get("outputSchema")
    execution = tool.get("execution") or {}
    task_support = execution.get("taskSupport", "forbidden")
    if task_support not in TASK_SUPPORT:
        raise DefinitionError(f"{where}.execution.taskSupport: must be one of {TASK_SUPPORT}")
    if task_support != "forbidden" and not kind.runs_as_task:
        raise DefinitionError(
            f"{where}.execution.taskSupport: a {kind.name} tool cannot run as a task"
        )
    wire: dict[str, Any] = {"name": name}
    wire.update(_optional(tool, ("title",)))
    wire["description"] = tool.get("description") or ""
    wire["inputSchema"] = input_schema
    wire.update(_optional(tool, ("outputSchema", "annotations", "icons", "execution", "_meta")))
    wire = freeze(wire)
    try:
        compiled = kind.compile({**tool, "config": config, "_server": server})
    except TemplateCompileError as exc:
        raise DefinitionError(f"{where}.config: {exc}") from None
    return CompiledTool(
        name=name,
        wire=wire,
        kind=kind,
        compiled=compiled,
        input_validator=_validator(wire["inputSchema"], f"{where}.inputSchema"),
        output_validator=(
            _validator(wire["outputSchema"], f"{where}.outputSchema") if output_schema else None
        ),
        task_support=task_support,
        pinned=bool(tool.get("pinned")),
        budget_chars=char_limit(
            int((tool.get("outputBudget") or {}).get("maxChars") or 0),
            int((tool.get("outputBudget") or {}).get("maxTokens") or 0),
        ),
        header_parameters=header_parameters(wire["inputSchema"]),
    )


_RESOURCE_WIRE = ("title", "description", "mimeType", "size", "icons", "annotations", "_meta")


def _compile_resource(resource: dict, where: str, server: dict) -> CompiledResource:
    uri, name = resource.get("uri"), resource.get("name")
    if not uri or not name:
        raise DefinitionError(f"{where}: uri and name are required")
    wire = {"uri": uri, "name": name, **_optional(resource, _RESOURCE_WIRE)}
    contents = {"uri": uri, **_optional(resource, ("mimeType",))}
    if uri.startswith("ui://") and resource.get("mimeType") == APP_MIME_TYPE:
        # MCP Apps: hosts read a view's policy and permissions from the read's contents.
        contents.update(_optional(resource, ("_meta",)))
    kind_name = resource.get("kind") or resources.STATIC
    try:
        kind = resources.runtime_kind(kind_name)
    except ValueError as exc:
        raise DefinitionError(f"{where}.kind: {exc}") from None
    if kind is not None:
        config = resource.get("config") or {}
        problems = kind.validate_config(config)
        if problems:
            raise DefinitionError("; ".join(f"{where}.{problem}" for problem in problems))
        try:
            compiled = kind.compile({**resource, "config": config, "_server": server})
        except TemplateCompileError as exc:
            raise DefinitionError(f"{where}.config: {exc}") from None
        return CompiledResource(
            uri=uri, wire=freeze(wire), contents=freeze(contents), kind=kind_name, compiled=compiled
        )
    if resource.get("blob") is not None:
        contents["blob"] = resource["blob"]
    else:
        contents["text"] = resource.get("text") or ""
    return CompiledResource(uri=uri, wire=freeze(wire), contents=freeze(contents))


def _completions(source: dict, where: str) -> Mapping[str, tuple[str, ...]]:
    completions = source.get("completions") or {}
    if not isinstance(completions, dict):
        raise DefinitionError(f"{where}.completions: must be a mapping of argument -> values")
    return MappingProxyType(
        {name: tuple(str(value) for value in values or ()) for name, values in completions.items()}
    )


def _compile_template(template: dict, where: str) -> CompiledResourceTemplate:
    uri_template, name = template.get("uriTemplate"), template.get("name")
    if not uri_template or not name:
        raise DefinitionError(f"{where}: uriTemplate and name are required")
    try:
        uritemplate.variables(uri_template)
    except uritemplate.UriTemplateError as exc:
        raise DefinitionError(f"{where}.uriTemplate: {exc}") from None
    wire = {
        "uriTemplate": uri_template,
        "name": name,
        **_optional(
            template, ("title", "description", "mimeType", "icons", "annotations", "_meta")
        ),
    }
    blob = template.get("blob")
    try:
        render = None if blob is not None else compile_value(template.get("text") or "")
    except TemplateCompileError as exc:
        raise DefinitionError(f"{where}.text: {exc}") from None
    return CompiledResourceTemplate(
        uri_template=uri_template,
        wire=freeze(wire),
        mime_type=template.get("mimeType") or None,
        render_text=render,
        blob=blob,
        completions=_completions(template, where),
    )


def _compile_prompt_kind(prompt: dict, where: str, server: dict) -> Any:
    try:
        kind = prompts.get_kind(prompt["kind"])
    except ValueError as exc:
        raise DefinitionError(f"{where}.kind: {exc}") from None
    config = prompt.get("config") or {}
    problems = kind.validate_config(config)
    if problems:
        raise DefinitionError("; ".join(f"{where}.{problem}" for problem in problems))
    try:
        return kind.compile({**prompt, "config": config, "_server": server})
    except TemplateCompileError as exc:
        raise DefinitionError(f"{where}.config: {exc}") from None


def _compile_prompt(prompt: dict, where: str, server: dict | None = None) -> CompiledPrompt:
    name = prompt.get("name")
    if not name:
        raise DefinitionError(f"{where}.name: required")
    arguments = prompt.get("arguments") or []
    wire = {"name": name, **_optional(prompt, ("title", "description", "icons", "_meta"))}
    if arguments:
        wire["arguments"] = arguments
    kind_name = prompt.get("kind") or prompts.STATIC
    if not prompts.is_stored(kind_name):
        return CompiledPrompt(
            name=name,
            wire=freeze(wire),
            description=prompt.get("description") or None,
            argument_names=tuple(arg["name"] for arg in arguments),
            required_arguments=tuple(arg["name"] for arg in arguments if arg.get("required")),
            render_messages=lambda variables: [],
            completions=_completions(prompt, where),
            kind=kind_name,
            compiled=_compile_prompt_kind(prompt, where, server or {}),
        )
    try:
        render = compile_value(prompt.get("messages") or [])
    except TemplateCompileError as exc:
        raise DefinitionError(f"{where}.messages: {exc}") from None
    # A static prompt's config may hold workflow steps that run before its messages render.
    steps = (prompt.get("config") or {}).get("steps") or []
    if steps:
        problems = workflow.validate_prompt_steps(steps, f"{where}.config.steps")
        if problems:
            raise DefinitionError("; ".join(problems))
    return CompiledPrompt(
        name=name,
        wire=freeze(wire),
        description=prompt.get("description") or None,
        argument_names=tuple(arg["name"] for arg in arguments),
        required_arguments=tuple(arg["name"] for arg in arguments if arg.get("required")),
        render_messages=render,
        completions=_completions(prompt, where),
        steps=workflow.compile_steps(steps, prompt) if steps else (),
    )


def compile_definition(
    definition: dict,
    *,
    server_id: int,
    organization_id: int,
    generation: str,
    owner_id: int | None = None,
) -> Snapshot:
    """Compile a definition dict (docs/architecture.md) into a Snapshot; DefinitionError if bad."""
    # A tool's view becomes a ui:// resource and the tool's _meta.ui (servers.views).
    definition = expand_views(interned(definition))
    # What kinds may need of the server itself (the http kind: its defaults and whose secrets).
    server = {
        "id": server_id,
        "organizationId": organization_id,
        "ownerId": owner_id,
        **{
            kind.server_settings: definition.get(kind.server_settings) or {}
            for kind in kinds.KINDS.values()
            if kind.server_settings
        },
    }
    tools: dict[str, CompiledTool] = {}
    tool_list = []
    for index, tool in enumerate(definition.get("tools") or []):
        if not tool.get("enabled", True):
            continue
        compiled = _compile_tool(tool, f"tools[{index}]", server)
        if compiled.name in tools:
            raise DefinitionError(f"tools[{index}].name: duplicate tool {compiled.name!r}")
        tools[compiled.name] = compiled
        tool_list.append(compiled.wire)

    resources: dict[str, CompiledResource] = {}
    for index, resource in enumerate(definition.get("resources") or []):
        compiled_resource = _compile_resource(resource, f"resources[{index}]", server)
        resources.setdefault(compiled_resource.uri, compiled_resource)

    templates = tuple(
        _compile_template(template, f"resourceTemplates[{index}]")
        for index, template in enumerate(definition.get("resourceTemplates") or [])
    )
    templates_by_uri: dict[str, CompiledResourceTemplate] = {}
    for template in templates:
        templates_by_uri.setdefault(template.uri_template, template)

    prompts: dict[str, CompiledPrompt] = {}
    for index, prompt in enumerate(definition.get("prompts") or []):
        compiled_prompt = _compile_prompt(prompt, f"prompts[{index}]", server)
        prompts.setdefault(compiled_prompt.name, compiled_prompt)

    server_info = {"name": definition.get("name") or definition.get("slug", "")}
    server_info.update(_optional(definition, ("title",)))
    server_info["version"] = definition.get("version") or "1.0.0"
    server_info.update(_optional(definition, ("icons",)))

    snapshot = Snapshot(
        server_id=server_id,
        organization_id=organization_id,
        owner_id=owner_id,
        slug=definition.get("slug", ""),
        generation=generation,
        status=definition.get("status", "active"),
        auth_mode=definition.get("auth", "api_key"),
        allowed_origins=frozenset(definition.get("allowedOrigins") or ()),
        server_info=freeze(server_info),
        instructions=definition.get("instructions") or None,
        capabilities=CAPABILITIES,
        tools=MappingProxyType(tools),
        tool_list=tuple(tool_list),
        resources=MappingProxyType(resources),
        resource_list=tuple(resource.wire for resource in resources.values()),
        resource_templates=templates,
        template_list=tuple(template.wire for template in templates),
        prompts=MappingProxyType(prompts),
        prompt_list=tuple(prompt.wire for prompt in prompts.values()),
        templates_by_uri=MappingProxyType(templates_by_uri),
        rate_limit_per_minute=int(definition.get("rateLimitPerMinute") or 0),
        log_arguments=bool(definition.get("logArguments")),
        agents=read_agent_settings(definition.get("agents")),
    )
    # Extensions are advertised only when the server uses them (MCP Apps, tasks).
    from servers.compiled.features import extensions

    used = extensions(snapshot)
    if used:
        snapshot = replace(snapshot, capabilities=freeze({**CAPABILITIES, "extensions": used}))
    return snapshot
