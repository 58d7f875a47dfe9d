"""A server definition compiled into an immutable Snapshot, and the per-process snapshot cache.

A warm request finds its snapshot by slug and generation without touching Postgres; the endpoint
reads the generation from Redis (infra.keys.server_generation) in its one pipeline.
"""

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from cachetools import LRUCache
from django.conf import settings

from mcp_protocol import uritemplate
from mcp_protocol.schemas import BoundedValidator, external_refs, schema_problems, validator_for

from . import invalidation, kinds, prompts, resources
from .agents.config import AgentSettings, char_limit
from .agents.config import read as read_agent_settings
from .agents.search import LazyIndex
from .kinds import workflow
from .templating import TemplateCompileError, compile_value


def _read_only(self, *args, **kwargs):
    raise TypeError(f"{type(self).__name__} is read-only: it belongs to a shared Snapshot")


class FrozenDict(dict):
    """A dict no one can change; still a dict, so orjson and jsonschema take it as it is."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _read_only


class FrozenList(list):
    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = clear = extend = insert = pop = remove = reverse = sort = _read_only


def freeze(value):
    """A deep read-only copy of JSON data."""
    if isinstance(value, dict):
        return FrozenDict((key, freeze(item)) for key, item in value.items())
    if isinstance(value, list | tuple):
        return FrozenList(freeze(item) for item in value)
    return value


CAPABILITIES = freeze(
    {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "prompts": {"listChanged": True},
        "completions": {},
        "logging": {},
    }
)
TASK_SUPPORT = ("forbidden", "optional", "required")
DEFAULT_INPUT_SCHEMA = {"type": "object"}


class DefinitionError(ValueError):
    """A definition that cannot be served; the message names the offending field."""


@dataclass(frozen=True, slots=True)
class CompiledTool:
    name: str
    wire: dict  # exactly what tools/list shows (a FrozenDict)
    kind: str
    compiled: Any
    input_validator: BoundedValidator
    output_validator: BoundedValidator | None
    task_support: str = "forbidden"
    # Listed even when the server lists meta-tools (servers/agents/discovery.py).
    pinned: bool = False
    # The tool's own result budget in characters (0: the server's); servers/agents/budgets.py.
    budget_chars: int = 0


@dataclass(frozen=True, slots=True)
class CompiledResource:
    uri: str
    wire: dict
    contents: dict  # one entry of resources/read `contents` (static resources)
    kind: str = "static"
    # Other kinds read their content on each read: servers.resources.<kind>.read(compiled, ...)
    compiled: Any = None


@dataclass(frozen=True, slots=True)
class CompiledResourceTemplate:
    uri_template: str
    wire: dict
    mime_type: str | None
    render_text: Callable[[dict], Any] | None
    blob: str | None
    completions: Mapping[str, tuple[str, ...]]

    def match(self, uri: str) -> dict | None:
        return uritemplate.match(self.uri_template, uri)


@dataclass(frozen=True, slots=True)
class CompiledPrompt:
    name: str
    wire: dict
    description: str | None
    argument_names: tuple[str, ...]
    required_arguments: tuple[str, ...]
    render_messages: Callable[[dict], list]
    completions: Mapping[str, tuple[str, ...]]
    # Workflow steps run before the messages render (a prompt that asks the client first).
    steps: tuple = ()
    kind: str = "static"
    # Other kinds produce the messages on each get: servers.prompts.<kind>.get(compiled, ...)
    compiled: Any = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    server_id: int
    organization_id: int
    slug: str
    generation: str
    status: str
    auth_mode: str
    allowed_origins: frozenset
    server_info: Mapping[str, Any]
    instructions: str | None
    capabilities: Mapping[str, Any]
    tools: Mapping[str, CompiledTool]
    tool_list: tuple[dict, ...]
    resources: Mapping[str, CompiledResource]
    resource_list: tuple[dict, ...]
    resource_templates: tuple[CompiledResourceTemplate, ...]
    template_list: tuple[dict, ...]
    prompts: Mapping[str, CompiledPrompt]
    prompt_list: tuple[dict, ...]
    templates_by_uri: Mapping[str, CompiledResourceTemplate] = field(
        default_factory=lambda: MappingProxyType({})
    )
    rate_limit_per_minute: int = 0
    log_arguments: bool = False
    # Discovery, output budgets and long calls (servers/agents/config.py).
    agents: AgentSettings = field(default_factory=AgentSettings)
    # The tool-search index, built on first use and kept as long as the snapshot.
    search_index: LazyIndex = field(default_factory=LazyIndex)
    # Governance, from the live rows (never the published definition): what each role may use
    # (servers/access.py) and the organization's monthly call quota, 0 for none (quotas.py).
    role_scopes: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    monthly_call_quota: int = 0


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
    kind_name = tool.get("kind", "static")
    try:
        kind = kinds.get_kind(kind_name)
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
    wire = {"name": name}
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
        kind=kind_name,
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
    )


_RESOURCE_WIRE = ("title", "description", "mimeType", "size", "icons", "annotations", "_meta")


def _compile_resource(resource: dict, where: str, server: dict) -> CompiledResource:
    uri, name = resource.get("uri"), resource.get("name")
    if not uri or not name:
        raise DefinitionError(f"{where}: uri and name are required")
    wire = {"uri": uri, "name": name, **_optional(resource, _RESOURCE_WIRE)}
    contents = {"uri": uri, **_optional(resource, ("mimeType",))}
    kind_name = resource.get("kind") or "static"
    if kind_name != "static":
        try:
            kind = resources.get_kind(kind_name)
        except ValueError as exc:
            raise DefinitionError(f"{where}.kind: {exc}") from None
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
    kind_name = prompt.get("kind") or "static"
    if kind_name != "static":
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
    definition: dict, *, server_id: int, organization_id: int, generation: str
) -> Snapshot:
    """Compile a definition dict (docs/architecture.md) into a Snapshot; DefinitionError if bad."""
    # What kinds may need of the server itself (the http kind: its defaults and whose secrets).
    server = {
        "id": server_id,
        "organizationId": organization_id,
        "http": definition.get("http") or {},
        "code": definition.get("code") or {},
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
        compiled = _compile_resource(resource, f"resources[{index}]", server)
        resources.setdefault(compiled.uri, compiled)

    templates = tuple(
        _compile_template(template, f"resourceTemplates[{index}]")
        for index, template in enumerate(definition.get("resourceTemplates") or [])
    )
    templates_by_uri: dict[str, CompiledResourceTemplate] = {}
    for template in templates:
        templates_by_uri.setdefault(template.uri_template, template)

    prompts: dict[str, CompiledPrompt] = {}
    for index, prompt in enumerate(definition.get("prompts") or []):
        compiled = _compile_prompt(prompt, f"prompts[{index}]", server)
        prompts.setdefault(compiled.name, compiled)

    server_info = {"name": definition.get("name") or definition.get("slug", "")}
    server_info.update(_optional(definition, ("title",)))
    server_info["version"] = definition.get("version") or "1.0.0"
    server_info.update(_optional(definition, ("icons",)))

    snapshot = Snapshot(
        server_id=server_id,
        organization_id=organization_id,
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
    from .surfaces.features import extensions

    used = extensions(snapshot)
    if used:
        snapshot = replace(snapshot, capabilities=freeze({**CAPABILITIES, "extensions": used}))
    return snapshot


# -- loading and the per-process cache ----------------------------------------------------------


def definition_for(server, version: str | None = None) -> dict | None:
    """The definition a server serves: its latest published version (its draft while it has
    none), or the pinned `version`; None when that version does not exist."""
    from .publishing import definition_to_serve

    return definition_to_serve(server, version)


def _cache_key(slug: str, version: str | None) -> str:
    return slug if version is None else f"{slug}@{version}"


def _load(slug: str, generation: str, version: str | None = None) -> Snapshot | None:
    from .models import Server

    server = Server.objects.filter(slug=slug).select_related("organization").first()
    if server is None:
        return None
    definition = definition_for(server, version)
    if definition is None:
        return None
    snapshot = compile_definition(
        definition,
        server_id=server.pk,
        organization_id=server.organization_id,
        generation=generation,
    )
    from .access import compile_role_access
    from .quotas import monthly_quota

    return replace(
        snapshot,
        role_scopes=compile_role_access(server.role_access),
        monthly_call_quota=monthly_quota(server.organization),
    )


# slug -> (generation, snapshot or None for an unknown slug, or the DefinitionError a broken
# definition raised). Entries are replaced whole, never changed in place; a broken definition
# costs no SQL until it changes either. At most SNAPSHOT_CACHE_SIZE entries, the least recently
# used dropped first (it is compiled again on its next call). The lock: loads fill the cache from
# worker threads while the event loop reads it, and a read reorders the LRU.
_cache: LRUCache[str, tuple[str, Snapshot | None, DefinitionError | None]] = LRUCache(
    settings.SNAPSHOT_CACHE_SIZE
)
_lock = threading.Lock()


def _cached(key: str, generation: str):
    with _lock:
        entry = _cache.get(key)
    if entry is None or entry[0] != generation:
        return False, None
    if entry[2] is not None:
        raise entry[2]
    return True, entry[1]


def _load_into_cache(slug: str, generation: str, version: str | None = None) -> Snapshot | None:
    invalidation.ensure_started()
    key = _cache_key(slug, version)
    # A change seen by this process's re-check while the rows were read may not be in them.
    epoch = invalidation.epoch()
    try:
        snapshot = _load(slug, generation, version)
    except DefinitionError as exc:
        if invalidation.still_current(epoch):
            with _lock:
                _cache[key] = (generation, None, exc)
        raise
    if invalidation.still_current(epoch):
        with _lock:
            _cache[key] = (generation, snapshot, None)
    return snapshot


async def get_snapshot(
    slug: str, generation: str | None, version: str | None = None
) -> Snapshot | None:
    """The snapshot of `slug` (or of its published `version`) at `generation` (the Redis value;
    None when the key is absent).

    None for an unknown slug or version; DefinitionError when the stored definition cannot be
    served. Publishing bumps the generation, so a pinned entry is checked the same way.
    """
    generation = "0" if generation is None else generation
    hit, snapshot = _cached(_cache_key(slug, version), generation)
    if hit:
        return snapshot
    from .db import run as run_db

    return await run_db(_load_into_cache, slug, generation, version)


def load_snapshot(slug: str, version: str | None = None) -> Snapshot | None:
    """For sync callers (REST, management commands): the current snapshot, through the cache."""
    from infra import keys
    from infra.redis import sync_client

    raw = sync_client().get(keys.server_generation(slug))
    generation = "0" if raw is None else raw.decode()
    hit, snapshot = _cached(_cache_key(slug, version), generation)
    if hit:
        return snapshot
    return _load_into_cache(slug, generation, version)


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def drop_server(slug: str) -> None:
    """Forget every cached snapshot of `slug` (its draft and each pinned version)."""
    with _lock:
        for key in [k for k in list(_cache) if k == slug or k.startswith(slug + "@")]:
            _cache.pop(key, None)


invalidation.watch("server", drop=drop_server, clear=clear_cache)  # Change.SERVER
