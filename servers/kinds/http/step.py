"""The workflow `http` step: one request whose response later steps read.

  - http: {method: GET, url: "https://api.example.com/items/{id}", response: {select: items},
           into: found, failOnError: true}

Later steps see `found.status`, `found.headers`, `found.body` (parsed JSON, or text),
`found.data` (after the selector) and `found.text` (the response template's output, if any)."""

import contextlib
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from mcp_protocol.context import RequestContext

from ...templating import render_text
from .compiling import HttpTool, compile_config
from .config import validate_config
from .result import upstream_error
from .sending import _is_json, _is_textual, fetch


class _Step(Protocol):
    """The workflow step (workflow.base.Step) an http step runs as."""

    @property
    def extra(self) -> Any: ...

    @property
    def key(self) -> str: ...


# -- the workflow `http` step ---------------------------------------------------------------------
#
#   - http: {method: GET, url: "https://api.example.com/items/{id}", response: {select: items},
#            into: found, failOnError: true}
#
# Later steps see `found.status`, `found.headers`, `found.body` (parsed JSON, or text),
# `found.data` (after the selector) and `found.text` (the response template's output, if any).

STEP_FIELDS = ("into", "failOnError")


def validate_step(body: dict[str, Any], path: str) -> list[str]:
    errors = validate_config(body, path, extra_fields=STEP_FIELDS)
    into = body.get("into")
    if into is not None and not (isinstance(into, str) and into.isidentifier()):
        errors.append(f"{path}.into: must be a variable name")
    if "failOnError" in body and not isinstance(body["failOnError"], bool):
        errors.append(f"{path}.failOnError: must be true or false")
    return errors


@dataclass(frozen=True, slots=True)
class StepRequest:
    tool: HttpTool
    fail_on_error: bool


def compile_step(body: dict[str, Any], tool_def: dict[str, Any] | None = None) -> StepRequest:
    config = {key: value for key, value in body.items() if key not in STEP_FIELDS}
    tool_def = tool_def or {}
    tool = compile_config(
        config,
        name=tool_def.get("name", "http step"),
        server=tool_def.get("_server"),
        send_unmapped=False,  # a workflow's variables are not all meant for the API
    )
    return StepRequest(tool, body.get("failOnError", True))


async def run_step(step: _Step, variables: dict[str, Any], ctx: RequestContext) -> None:
    request: StepRequest = step.extra
    tool = request.tool
    response, masker = await fetch(tool, variables, variables, ctx)
    if response.status_code >= 400 and request.fail_on_error:
        raise upstream_error(response, masker)
    body: Any = response.text if _is_textual(response.content_type) else None
    if _is_json(response.content_type) and not response.truncated:
        with contextlib.suppress(orjson.JSONDecodeError):
            body = orjson.loads(response.content) if response.content else None
    data = body
    if tool.select is not None and not isinstance(body, str):
        data = tool.select.search(body)
    value = {
        "status": response.status_code,
        "headers": {k.lower(): v for k, v in response.headers.items()},
        "body": masker.mask_data(body),
        "data": masker.mask_data(data),
        "truncated": response.truncated,
    }
    if tool.render_template is not None:
        rendered = tool.render_template(
            {
                "response": data,
                "status": response.status_code,
                "headers": value["headers"],
                "args": variables,
            }
        )
        value["text"] = masker.mask(render_text(rendered))
    variables[step.key] = value
    return None
