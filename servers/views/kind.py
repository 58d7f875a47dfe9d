"""`kind: view`: the resource a tool's view becomes (servers.views.expand). Its config is the
view, the tool it belongs to and, for a form, the tool the form calls. Compiled once into the two
halves of the document; each read joins them around the process's one copy of the SDK."""

from contextlib import suppress
from dataclasses import dataclass

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import INTERNAL_ERROR, McpError

from .document import custom_document, generated_document
from .expand import resource_meta
from .sdk import SdkMissing, sdk_script
from .spec import APP_MIME_TYPE, view_problems


@dataclass(frozen=True, slots=True)
class ViewResource:
    head: str
    tail: str
    meta: dict


def validate_config(config: dict, path: str = "config") -> list[str]:
    if not isinstance(config, dict):
        return [f"{path}: must be a mapping"]
    unknown = sorted(set(config) - {"view", "formTool", "toolName"})
    problems = [f"{path}.{key}: unknown field" for key in unknown]
    if not config.get("view"):
        problems.append(f"{path}.view: required")
    return problems + view_problems(config.get("view"), f"{path}.view")


def compile(resource_def: dict) -> ViewResource:
    # The SDK is loaded here, when a snapshot is built, so no read ever waits for it; when it
    # is missing, each read says so.
    with suppress(SdkMissing):
        sdk_script()
    config = resource_def["config"]
    view = config["view"]
    if view.get("template") == "html":
        head, tail = custom_document(view.get("html") or "")
    else:
        fallback = config.get("toolName") or resource_def.get("name") or "View"
        head, tail = generated_document(view, config.get("formTool"), fallback)
    return ViewResource(head=head, tail=tail, meta=resource_meta(view))


async def read(compiled: ViewResource, uri: str, ctx: RequestContext) -> list[dict]:
    try:
        sdk = sdk_script()
    except SdkMissing as exc:
        raise McpError(INTERNAL_ERROR, f"Resource {uri} cannot be served: {exc}.") from None
    return [
        {
            "uri": uri,
            "mimeType": APP_MIME_TYPE,
            "text": compiled.head + sdk + compiled.tail,
            "_meta": compiled.meta,
        }
    ]
