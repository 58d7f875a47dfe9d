"""The tool-kind contract: what a kind needs and can do, declared by the kind itself.

Code outside servers/kinds never tests a kind's name: it asks the kind's contract (found in the
registry, servers.kinds.KINDS, or on a compiled tool as `CompiledTool.kind`). A new kind is one
subclass of ToolKind and one line in the registry; the endpoint, the tasks layer, the
definition checks and the dashboard follow from what it declares.
"""

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from enum import Enum
from types import MappingProxyType
from typing import Any, ClassVar

from mcp_protocol.context import RequestContext


class TemplateScope(Enum):
    """Where a kind's config holds templates over the tool's arguments, so the definition
    checks can name an argument a template uses but the input schema does not declare."""

    NONE = "none"  # no templates over arguments (code is Python; upstream passes calls on)
    RESULT = "result"  # the whole config is one templated result
    REQUEST = "request"  # an HTTP request: url, headers, query, body, auth
    STEPS = "steps"  # config.steps, each step templated over the arguments and earlier answers


class ToolKind(ABC):
    """One tool kind. Subclasses set the class attributes and implement the three methods
    every kind has (validate_config, compile, call); the rest have safe defaults."""

    # -- identity --------------------------------------------------------------------------------
    name: ClassVar[str]  # the `kind:` of a tool definition
    label: ClassVar[str]  # how the dashboard names it

    # -- what it can do and needs ------------------------------------------------------------------
    # A call may send notifications (progress, logs) or ask the client (elicit, sample, roots)
    # before it answers, so the endpoint answers it on an event stream when the client accepts one.
    streams_progress: ClassVar[bool] = False
    # A tool of this kind may declare execution.taskSupport optional or required.
    runs_as_task: ClassVar[bool] = True
    # Calls read the vault's secrets of the server (test values during a test run).
    reads_secrets: ClassVar[bool] = False
    # Calls need who is calling (the person, role, client) beyond the credential string.
    needs_caller: ClassVar[bool] = False
    # Its tools may declare a connected account of the caller they act through
    # (`connection: {provider, scopes}`, connections/): such a call looks the caller's token up,
    # or asks the person to connect (URL elicitation); a tool declaring none never does.
    needs_connection: ClassVar[bool] = False
    # Calls record the host calls and prints of sandboxed code, shown by a test run.
    reports_host_calls: ClassVar[bool] = False
    # The config names fixed network destinations the outbound guard may refuse (destinations).
    has_destinations: ClassVar[bool] = False
    # The key of the server definition holding this kind's server-level settings, if any.
    server_settings: ClassVar[str | None] = None
    template_scope: ClassVar[TemplateScope] = TemplateScope.NONE

    # -- the dashboard form ------------------------------------------------------------------------
    # The config the editor starts with when this kind is chosen and the config is empty.
    config_example: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    # A template of fields shown only for this kind, included by the tool editor.
    form_template: ClassVar[str | None] = None
    # A config key edited in a field of its own rather than inside the config JSON.
    form_source_key: ClassVar[str | None] = None
    # What that field starts with for a new tool.
    form_source_example: ClassVar[str] = ""

    # -- config ------------------------------------------------------------------------------------
    @abstractmethod
    def validate_config(self, config: dict[str, Any]) -> list[str]:
        """Problems of a tool's config, each naming its field from `config` on; the kind's
        config schema."""

    def validate_on_save(self, config: dict[str, Any]) -> list[str]:
        """Checks too costly for every snapshot compile, run where a definition is saved (after
        validate_config found nothing)."""
        return []

    def validate_server_settings(self, settings: Any, path: str) -> list[str]:
        """Problems of the server's `server_settings` section."""
        return []

    def secret_names(self, config: dict[str, Any], server_settings: Any = None) -> frozenset[str]:
        """The secrets a call of this tool can read: those its config names, and those its
        kind's server-level section (`server_settings`) names, which every call sends. What an
        admin approves before a member's tool may reach them (servers/secret_reach.py)."""
        return frozenset()

    def reach_config(self, config: dict[str, Any]) -> Any:
        """The part of a config that decides what a call does with the secrets it reads: an
        approval covers exactly this (servers/secret_reach.py). By default, all of it."""
        return config

    def destinations(self, config: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        """(field path, URL as written) of every fixed destination a call reaches."""
        return iter(())

    # -- running -----------------------------------------------------------------------------------
    @abstractmethod
    def compile(self, tool_def: dict[str, Any]) -> Any:
        """The tool, compiled once per snapshot (tool_def["_server"]: the server's settings)."""

    @abstractmethod
    async def call(
        self, compiled: Any, arguments: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        """One tools/call: a CallToolResult dict; a ToolError for a failure the model sees."""

    def asks_before_task(self, compiled: Any) -> bool:
        """Whether the compiled tool asks its client first and only then becomes a task (a
        workflow with a `task` step), rather than being a task from its start."""
        return False

    def __repr__(self) -> str:
        return f"<tool kind {self.name}>"
