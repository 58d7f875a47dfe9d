"""One request of a collection turned into an `http` tool: its name (folders first), method,
URL (urls.py), headers, body (bodies.py) and auth (auth.py)."""

from ..mapping import http_config
from ..preview import (
    Argument,
    ImportedOperation,
    annotations_for,
    input_schema,
    snake,
    tool_name,
    unique,
)
from ..schemas import schema_problems
from .auth import auth_settings
from .bodies import body_arguments
from .entries import description, pairs
from .urls import url_template
from .variables import Variables

_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
# Set by the http kind from the body type; a copy in the config could only disagree with it.
_MANAGED_HEADERS = {"content-type", "content-length", "host"}


def imported_request(
    variables: Variables, found_auth: list[dict], item, folders, auth, taken
) -> ImportedOperation:
    request = item["request"]
    if isinstance(request, str):
        request = {"method": "GET", "url": request}
    name_raw = str(item.get("name") or "request")
    source = " / ".join([*folders, name_raw])
    problems: list[str] = []
    method = str(request.get("method") or "GET").upper()
    if method not in _METHODS:
        problems.append(f"method {method} is not supported; GET used")
        method = "GET"
    name = unique(tool_name("_".join(snake(p) for p in [*folders, name_raw] if snake(p))), taken)
    arguments: list[Argument] = []
    arg_taken: set[str] = set()
    url = url_template(variables, request.get("url"), arguments, arg_taken, problems)
    headers = _headers(variables, request.get("header"), arguments, arg_taken, problems)
    body_type = body_arguments(variables, request.get("body"), arguments, arg_taken, problems)
    settings = auth_settings(variables, found_auth, request.get("auth", auth), problems)
    schema = input_schema(arguments)
    problems.extend(schema_problems(schema))
    text = description(request.get("description")) or description(item.get("description"))
    return ImportedOperation(
        name=name,
        source=source,
        operation_id=None,
        title=name_raw[:200],
        description=text or name_raw,
        method=method,
        input_schema=schema,
        config=http_config(
            method=method,
            url=url,
            arguments=arguments,
            auth=settings,
            headers=headers,
            body_type=body_type,
            problems=problems,
        ),
        annotations=annotations_for(method),
        problems=problems,
        arguments=arguments,
    )


def _headers(variables: Variables, headers, arguments, taken, problems) -> dict:
    constant = {}
    for header in pairs(headers if isinstance(headers, list) else []):
        wire = str(header["key"])
        if wire.lower() in _MANAGED_HEADERS:
            continue
        value = variables.value_argument(
            header.get("value"),
            "header",
            wire,
            taken,
            problems,
            f"header {wire}",
            description(header.get("description")),
        )
        if isinstance(value, Argument):
            arguments.append(value)
        else:
            constant[wire] = value
    return constant
