"""The Python language of code tools: checks on save, the program fed to Monty, and a run."""

from typing import Any

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import ToolError
from vault.wording import missing_secrets

from . import python_source, syntax
from .result import to_result
from .runtime import Run, driver
from .tool import CodeTool


def check(source: str) -> list[str]:
    """What every compile checks (cheap: see python_source)."""
    return python_source.check(source)[0]


def check_on_save(source: str) -> list[str]:
    """What a save checks besides: the source parses (Monty's parser, in a sandbox worker)."""
    return syntax.errors(source)


def entry(source: str) -> python_source.Entry:
    found = python_source.check(source)[1]
    if found is None:  # compile() runs only on source that passed check()
        raise ValueError("the source defines no main(args) entry point")
    return found


def program(source: str) -> str:
    return source.rstrip() + "\n" + driver(entry(source))


referenced_secrets = python_source.referenced_secrets


async def _secrets(tool: CodeTool, ctx: RequestContext) -> dict[str, Any]:
    from vault.resolve import asecrets_for

    if tool.organization_id is None or not tool.secret_names:
        return {}
    values = await asecrets_for(tool.organization_id, tool.server_id, test=ctx.use_test_secrets)
    missing = sorted(tool.secret_names - set(values))
    if missing:
        raise ToolError(missing_secrets(missing))
    return {name: values[name] for name in tool.secret_names}


async def _connections(tool: CodeTool, ctx: RequestContext) -> dict[str, str]:
    """The caller's token for each connection the tool declares; a caller without one is sent
    to connect first (connections/need.py)."""
    if not tool.connections:
        return {}
    from connections.need import token_or_consent

    if tool.organization_id is None:
        raise ToolError("A tool with a connection runs only on a server of an organization.")
    tokens = {}
    for requirement in tool.connections:
        token = await token_or_consent(
            ctx, organization_id=tool.organization_id, requirement=requirement
        )
        tokens[requirement.provider] = token.value
        if token.label not in ctx.connections_used:
            ctx.connections_used = (*ctx.connections_used, token.label)
    return tokens


def _info(tool: CodeTool, ctx: RequestContext) -> dict[str, Any]:
    return {
        "tool": tool.name,
        "protocolVersion": ctx.protocol_version,
        "client": ctx.client_info,
        "isTest": ctx.use_test_secrets,
        "outputBytes": tool.limits.output_bytes,
    }


async def run(tool: CodeTool, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    from vault.masking import Masker

    secrets = await _secrets(tool, ctx)
    connections = await _connections(tool, ctx)
    masker = Masker([*secrets.values(), *connections.values()])
    runner = Run(tool, arguments, ctx, masker, secrets, connections)
    try:
        value = await runner.execute(tool.source, _info(tool, ctx))
    except ToolError as exc:
        raise ToolError(masker.mask(exc.message), exc.structured_content) from None
    finally:
        printed = ctx.printed
        if printed is not None:
            printed.extend(
                {"stream": stream, "text": masker.mask(text)}
                for stream, text in runner.prints.output
            )
    return to_result(
        value,
        has_output_schema=tool.has_output_schema,
        masker=masker,
        max_bytes=tool.limits.output_bytes,
    )
