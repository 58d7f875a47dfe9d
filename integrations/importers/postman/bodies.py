"""A request's body (urlencoded, form-data, raw JSON or text, GraphQL) turned into tool
arguments and the body type the `http` kind sends.

A raw JSON body's top-level fields become arguments of their own; its `{{variables}}` are
read as sentinels first, so a body that is JSON only once its variables are filled still parses.
"""

import re

import orjson

from ..preview import Argument, argument_name, unique
from .entries import pairs
from .variables import VARIABLE, Variables

_SENTINEL = "\u0000var:"


def body_arguments(variables: Variables, body, arguments, taken, problems) -> str | None:
    if not isinstance(body, dict) or body.get("disabled"):
        return None
    mode = body.get("mode")
    if mode in ("urlencoded", "formdata"):
        for field in pairs(body.get(mode)):
            wire = str(field["key"])
            if field.get("type") == "file":
                problems.append(f"form field {wire!r}: file uploads are sent as text")
            arguments.append(
                variables.entry_argument(
                    field,
                    "form",
                    taken,
                    problems,
                    f"form field {wire}",
                    required_when_empty=field.get("type") != "file",
                )
            )
        return "form" if mode == "urlencoded" else "multipart"
    if mode == "raw":
        raw = str(body.get("raw") or "")
        if not raw.strip():
            return None
        parsed = _parse_json_template(raw)
        if isinstance(parsed, dict) and parsed:
            for key, value in parsed.items():
                arguments.append(_json_field(variables, key, value, taken, problems))
            return "json"
        example = variables.render_data(_strip_sentinels(parsed), problems, "body")
        if parsed is None:
            example = variables.render(raw, problems, "body")
        arguments.append(
            Argument(
                name=unique("body", taken),
                location="body",
                wire_name=None,
                schema={**_infer_schema(example), "examples": [example]},
                required=True,
                description="The request body.",
            )
        )
        return "text" if parsed is None else "json"
    if mode == "graphql":
        graphql = body.get("graphql") or {}
        problems.append("body: a GraphQL body is sent as JSON {query, variables}")
        arguments.append(
            Argument(
                name=unique("query", taken),
                location="body",
                wire_name="query",
                schema={"type": "string", "default": str(graphql.get("query") or "")},
                required=not graphql.get("query"),
            )
        )
        arguments.append(
            Argument(
                name=unique("variables", taken),
                location="body",
                wire_name="variables",
                schema={"type": "object"},
            )
        )
        return "json"
    if mode:
        problems.append(f"body: mode {mode!r} is not supported; no body is sent")
    return None


def _json_field(variables: Variables, key, value, taken, problems) -> Argument:
    if isinstance(value, str) and value.startswith(_SENTINEL):
        variable = value[len(_SENTINEL) :]
        default = variables.values.get(variable)
        schema = {"type": "string"}
        if default:
            schema["default"] = default
        return Argument(
            name=unique(argument_name(key), taken),
            location="body",
            wire_name=key,
            schema=schema,
            required=not default,
            description=f"Postman variable {{{{{variable}}}}}.",
        )
    example = variables.render_data(_strip_sentinels(value), problems, f"body field {key}")
    schema = _infer_schema(example)
    if example is not None:
        schema["default"] = example
    return Argument(
        name=unique(argument_name(key), taken), location="body", wire_name=key, schema=schema
    )


def _parse_json_template(raw: str):
    """A raw JSON body whose `{{variables}}` (quoted or not) are sentinels; None if not JSON."""
    text = re.sub(
        r'"\{\{\s*([^{}\s]+)\s*\}\}"', lambda m: orjson.dumps(_SENTINEL + m.group(1)).decode(), raw
    )
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    # Unquoted variables stand for numbers or objects: `"count": {{n}}`.
    text = VARIABLE.sub(lambda m: orjson.dumps(_SENTINEL + m.group(1)).decode(), text)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _strip_sentinels(value):
    if isinstance(value, str) and value.startswith(_SENTINEL):
        return None
    if isinstance(value, dict):
        return {k: _strip_sentinels(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_sentinels(v) for v in value]
    return value


def _infer_schema(value) -> dict:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, list):
        items = _infer_schema(value[0]) if value else {}
        return {"type": "array", "items": items} if items else {"type": "array"}
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: _infer_schema(v) for k, v in value.items()}}
    if value is None:
        return {}
    return {"type": "string"}
