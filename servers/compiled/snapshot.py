"""What a compiled Snapshot holds: its tools, resources, templates and prompts, ready to serve."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mcp_protocol import uritemplate
from mcp_protocol.param_headers import HeaderParameters
from mcp_protocol.schemas import BoundedValidator
from servers.discovery.config import AgentSettings
from servers.discovery.hybrid import LazyIndex
from servers.discovery.vectors import NO_VECTORS, ToolVectors

from ..kinds.contract import ToolKind
from .frozen import freeze

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
    kind: ToolKind  # what the tool's kind can do (servers/kinds/contract.py)
    compiled: Any
    input_validator: BoundedValidator
    output_validator: BoundedValidator | None
    task_support: str = "forbidden"
    # Listed even when the server lists meta-tools (gateway/agents/discovery.py).
    pinned: bool = False
    # The tool's own result budget in characters (0: the server's); gateway/agents/budgets.py.
    budget_chars: int = 0
    # Arguments a 2026-07-28 client also sends as Mcp-Param-* headers (mcp_protocol/
    # param_headers.py), read from the input schema once here rather than on every call.
    header_parameters: HeaderParameters = ()


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
    # Discovery, output budgets and long calls (servers/discovery/config.py).
    agents: AgentSettings = field(default_factory=AgentSettings)
    # The tool-search index, built on first use and kept as long as the snapshot.
    search_index: LazyIndex = field(default_factory=LazyIndex)
    # The tools' embeddings, computed at publish and read when the snapshot is loaded
    # (servers/embeddings.py); tools missing here are searched by their words alone.
    tool_vectors: ToolVectors = NO_VECTORS
    # Governance, from the live rows (never the published definition): what each role may use
    # (servers/access.py) and the organization's monthly call quota, 0 for none (quotas.py).
    role_scopes: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    monthly_call_quota: int = 0
    # The paying account behind the organization (accounts.Organization.billing_owner), None
    # when it has none: sandbox shares and stored results count by it.
    owner_id: int | None = None
