"""The MCP methods a server answers, implemented on a compiled Snapshot.

Results are plain dicts ready for orjson. List entries are the snapshot's own wire dicts, shared
between requests: callers may add keys to a result, never change what is inside it.
"""

from typing import Any

from mcp_protocol import errors, versions
from mcp_protocol.context import RequestContext
from mcp_protocol.errors import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    McpError,
    ToolError,
    method_not_found,
)
from mcp_protocol.pagination import paginate

from . import prompts, resources
from .kinds import calling
from .kinds.static import normalize_content
from .kinds.workflow import run_steps
from .templating import render_text

PAGE_SIZE = 50
MAX_COMPLETIONS = 100


def _invalid(message: str, data=None) -> McpError:
    return McpError(INVALID_PARAMS, message, data)


def _string_param(params: dict, name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value:
        raise _invalid(f"Missing or invalid parameter: {name}")
    return value


def page(items, params: dict, key: str) -> dict:
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise _invalid("Invalid cursor")
    entries, next_cursor = paginate(items, cursor, PAGE_SIZE)
    result: dict[str, Any] = {key: entries}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


# -- tools --------------------------------------------------------------------------------------


async def tools_list(snapshot, params, ctx: RequestContext) -> dict:
    return page(snapshot.tool_list, params, "tools")


def _error_path(error) -> str:
    return "/".join(str(part) for part in error.absolute_path) or "(root)"


def tool_error_result(message: str, structured_content=None) -> dict:
    result = {"content": [{"type": "text", "text": message}], "isError": True}
    if structured_content is not None:
        result["structuredContent"] = structured_content
    return result


async def tools_call(snapshot, params, ctx: RequestContext) -> dict:
    name = _string_param(params, "name")
    tool = snapshot.tools.get(name)
    if tool is None:
        raise _invalid(f"Unknown tool: {name}")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise _invalid("Tool arguments must be an object")

    errors = sorted(
        tool.input_validator.iter_errors(arguments), key=lambda e: list(e.absolute_path)
    )
    if errors:
        lines = "\n".join(f"- {_error_path(error)}: {error.message}" for error in errors)
        return tool_error_result(f"Invalid arguments for tool {name}:\n{lines}")

    # Code tools call the other tools of this server through it.
    token = calling.current.set(calling.Calling(snapshot, tools_call))
    try:
        result = await tool.kind.call(tool.compiled, arguments, ctx)
    except ToolError as exc:
        return tool_error_result(exc.message, exc.structured_content)
    finally:
        calling.current.reset(token)

    if tool.output_validator is not None and not result.get("isError"):
        if "structuredContent" not in result:
            return tool_error_result(
                f"Tool {name} declares an outputSchema but returned no structuredContent"
            )
        errors = sorted(
            tool.output_validator.iter_errors(result["structuredContent"]),
            key=lambda e: list(e.absolute_path),
        )
        if errors:
            lines = "\n".join(f"- {_error_path(error)}: {error.message}" for error in errors)
            return tool_error_result(
                f"Tool {name} returned structuredContent that does not match its outputSchema:\n"
                f"{lines}"
            )
    return result


# -- resources ----------------------------------------------------------------------------------


async def resources_list(snapshot, params, ctx: RequestContext) -> dict:
    return page(snapshot.resource_list, params, "resources")


async def resources_templates_list(snapshot, params, ctx: RequestContext) -> dict:
    return page(snapshot.template_list, params, "resourceTemplates")


def _not_found(uri: str, ctx: RequestContext) -> McpError:
    version = ctx.protocol_version
    code = (
        INVALID_PARAMS
        if versions.missing_resource_is_invalid_params(version)
        else RESOURCE_NOT_FOUND
    )
    return McpError(code, "Resource not found", {"uri": uri})


async def resources_read(snapshot, params, ctx: RequestContext) -> dict:
    uri = _string_param(params, "uri")
    resource = snapshot.resources.get(uri)
    if resource is not None:
        if resource.compiled is not None:
            kind = resources.get_kind(resource.kind)
            return {"contents": await kind.read(resource.compiled, uri, ctx)}
        return {"contents": [dict(resource.contents)]}
    for template in snapshot.resource_templates:
        variables = template.match(uri)
        if variables is None:
            continue
        contents = {"uri": uri}
        if template.mime_type:
            contents["mimeType"] = template.mime_type
        if template.render_text is None:
            contents["blob"] = template.blob
        else:
            try:
                contents["text"] = render_text(template.render_text(variables))
            except ToolError as exc:
                raise McpError(
                    errors.INTERNAL_ERROR, f"Resource template failed: {exc.message}"
                ) from None
        return {"contents": [contents]}
    raise _not_found(uri, ctx)


# -- prompts ------------------------------------------------------------------------------------


async def prompts_list(snapshot, params, ctx: RequestContext) -> dict:
    return page(snapshot.prompt_list, params, "prompts")


async def prompts_get(snapshot, params, ctx: RequestContext) -> dict:
    name = _string_param(params, "name")
    prompt = snapshot.prompts.get(name)
    if prompt is None:
        raise _invalid(f"Unknown prompt: {name}")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise _invalid("Prompt arguments must be an object")
    missing = [arg for arg in prompt.required_arguments if arguments.get(arg) in (None, "")]
    if missing:
        raise _invalid(f"Missing required argument: {', '.join(missing)}", {"missing": missing})
    if prompt.compiled is not None:
        return await prompts.get_kind(prompt.kind).get(prompt.compiled, arguments, ctx)
    variables = {name: "" for name in prompt.argument_names}
    variables.update({key: value for key, value in arguments.items() if isinstance(key, str)})
    try:
        if prompt.steps:
            # Answers to the steps' questions become variables of the messages.
            await run_steps(prompt.steps, variables, ctx)
        messages = prompt.render_messages(variables)
    except ToolError as exc:
        raise McpError(errors.INTERNAL_ERROR, f"Prompt failed: {exc.message}") from None
    normalize_content([message.get("content") for message in messages if isinstance(message, dict)])
    result = {"messages": messages}
    if prompt.description:
        result["description"] = prompt.description
    return result


# -- completion ---------------------------------------------------------------------------------


async def completion_complete(snapshot, params, ctx: RequestContext) -> dict:
    ref = params.get("ref")
    argument = params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise _invalid("completion/complete needs ref and argument")
    if ref.get("type") == "ref/prompt":
        owner = snapshot.prompts.get(ref.get("name"))
        if owner is None:
            raise _invalid(f"Unknown prompt: {ref.get('name')}")
    elif ref.get("type") == "ref/resource":
        owner = snapshot.templates_by_uri.get(ref.get("uri"))
        if owner is None:
            raise _invalid(f"Unknown resource template: {ref.get('uri')}")
    else:
        raise _invalid("ref.type must be ref/prompt or ref/resource")
    name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(name, str) or not isinstance(value, str):
        raise _invalid("argument needs a name and a string value")
    prefix = value.casefold()
    matches = [
        item for item in owner.completions.get(name, ()) if item.casefold().startswith(prefix)
    ]
    return {
        "completion": {
            "values": matches[:MAX_COMPLETIONS],
            "total": len(matches),
            "hasMore": len(matches) > MAX_COMPLETIONS,
        }
    }


HANDLERS = {
    "tools/list": tools_list,
    "tools/call": tools_call,
    "resources/list": resources_list,
    "resources/read": resources_read,
    "resources/templates/list": resources_templates_list,
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
    "completion/complete": completion_complete,
}
METHODS = frozenset(HANDLERS)


async def call_method(snapshot, method: str, params: dict, ctx: RequestContext) -> dict:
    handler = HANDLERS.get(method)
    if handler is None:
        raise method_not_found(method)
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise _invalid("params must be an object")
    return await handler(snapshot, params, ctx)
