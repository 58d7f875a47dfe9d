"""One operation of a path turned into an `http` tool: its arguments (parameters.py and
bodies.py), its URL on the first server, its auth (security.py) and its description."""

from ..mapping import http_config
from ..preview import (
    Argument,
    ImportedOperation,
    annotations_for,
    describe,
    identifier,
    input_schema,
    unique,
)
from ..schemas import schema_problems
from .bodies import request_body, swagger_body
from .document import OpenAPIDocument
from .naming import PATH_TEMPLATE, operation_name
from .parameters import operation_parameters, parameter_argument
from .security import SecuritySchemes


def imported_operation(
    document: OpenAPIDocument, security: SecuritySchemes, path, method, op, item, servers, taken
) -> ImportedOperation:
    source = f"{method.upper()} {path}"
    problems: list[str] = []
    name, operation_id = operation_name(path, method, op, taken, problems)

    arguments: list[Argument] = []
    arg_taken: set[str] = set()
    body_type = None
    for param in operation_parameters(document, item, op, problems):
        arg = parameter_argument(document, param, problems, arg_taken)
        if arg is not None:
            arguments.append(arg)
    if document.dialect == "2.0":
        body_args, body_type = swagger_body(document, op, problems, arg_taken)
    else:
        body_args, body_type = request_body(document, op, problems, arg_taken)
    arguments.extend(body_args)

    declared = {a.wire_name for a in arguments if a.location == "path"}
    for placeholder in PATH_TEMPLATE.findall(path):
        if placeholder not in declared:
            problems.append(f"path parameter {placeholder!r} is not declared; added as a string")
            arguments.append(
                Argument(
                    name=unique(identifier(placeholder), arg_taken),
                    location="path",
                    wire_name=placeholder,
                    schema={"type": "string"},
                    required=True,
                )
            )
    url_path = PATH_TEMPLATE.sub(
        lambda m: "{" + _argument_for(arguments, "path", m.group(1)) + "}", path
    )

    op_servers = document.servers(op.get("servers"), f"{source}.servers") or servers
    if not op_servers:
        problems.append("no server URL: the tool's url is only the path until a base URL is set")
    base = op_servers[0] if op_servers else ""

    auth, connection = security.for_operation(op, problems)
    if op.get("deprecated"):
        problems.append("the operation is deprecated")

    schema = input_schema(arguments, document.resolver.take_defs())
    problems.extend(schema_problems(schema))
    summary = str(op.get("summary") or "").strip()
    details = str(op.get("description") or "").strip()
    description = describe(summary, details) or f"{method.upper()} {path}"
    headers = {"Accept": "application/json"}
    config = http_config(
        method=method,
        url=base + url_path,
        arguments=arguments,
        auth=auth,
        headers=headers,
        body_type=body_type,
        problems=problems,
    )
    if connection is not None:
        config["connection"] = connection
    return ImportedOperation(
        name=name,
        source=source,
        operation_id=operation_id,
        title=summary[:200],
        description=description,
        method=method.upper(),
        input_schema=schema,
        config=config,
        annotations=annotations_for(method),
        problems=problems,
        arguments=arguments,
    )


def _argument_for(arguments: list[Argument], location: str, wire: str) -> str:
    for arg in arguments:
        if arg.location == location and arg.wire_name == wire:
            return arg.name
    return wire
