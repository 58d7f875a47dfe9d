"""The workflow kind's contract (servers/kinds/contract.py)."""

from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

from mcp_protocol.context import RequestContext

from ..contract import TemplateScope, ToolKind
from ..http.config import referenced_secrets
from . import call, compile, validate_config
from .base import Step

EXAMPLE = {
    "steps": [
        {"log": {"level": "info", "message": "Started with {{ message }}"}},
        {
            "elicit": {
                "message": "Send “{{ message }}”?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"confirm": {"type": "boolean", "title": "Confirm"}},
                    "required": ["confirm"],
                },
                "into": "answer",
            }
        },
        {"return": {"content": [{"type": "text", "text": "You chose: {{ answer.action }}"}]}},
    ]
}


class WorkflowKind(ToolKind):
    name = "workflow"
    label = "Workflow"
    streams_progress = True  # log, progress, elicit, sample, roots steps
    reads_secrets = True  # through its http steps
    has_destinations = True  # its http steps
    template_scope = TemplateScope.STEPS
    config_example = MappingProxyType(EXAMPLE)

    def validate_config(self, config: dict[str, Any]) -> list[str]:
        return validate_config(config)

    def secret_names(self, config: dict[str, Any], server_settings: Any = None) -> frozenset[str]:
        return frozenset(referenced_secrets(config))  # its http steps'

    def destinations(self, config: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        for index, step in enumerate(config.get("steps") or []):
            if isinstance(step, dict) and isinstance(step.get("http"), dict):
                yield f"config.steps[{index}].http.url", step["http"].get("url")

    def compile(self, tool_def: dict[str, Any]) -> tuple[Step, ...]:
        return compile(tool_def)

    async def call(
        self, compiled: tuple[Step, ...], arguments: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        return await call(compiled, arguments, ctx)

    def asks_before_task(self, compiled: Any) -> bool:
        # A `task` step: the steps before it ask the client, the rest run as a task.
        if not isinstance(compiled, tuple):
            return False
        return any(getattr(step, "kind", None) == "task" for step in compiled)


KIND = WorkflowKind()
