"""An operation's request body (OpenAPI 3's `requestBody`, Swagger 2.0's `body` and `formData`
parameters) turned into tool arguments and the body type the `http` kind sends."""

from ..preview import Argument, argument_name, unique
from ..schemas import RefError
from .document import OpenAPIDocument

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def request_body(document: OpenAPIDocument, op, problems, arg_taken):
    raw = op.get("requestBody")
    if raw is None:
        return [], None
    try:
        body = document.resolver.resolve(raw)
    except RefError as exc:
        problems.append(f"requestBody: {exc}; no body is sent")
        return [], None
    content = body.get("content") if isinstance(body, dict) else None
    if not isinstance(content, dict) or not content:
        problems.append("requestBody: no content types; no body is sent")
        return [], None
    media = _pick_media_type(content)
    if media is None:
        problems.append(
            f"requestBody: content types {', '.join(content)} are not supported "
            "(JSON, form and text bodies are); no body is sent"
        )
        return [], None
    if len(content) > 1:
        others = ", ".join(m for m in content if m != media)
        problems.append(f"requestBody: sent as {media}; {others} not used")
    raw_schema = (content[media] or {}).get("schema", {})
    schema = document.resolver.schema(raw_schema, problems, "requestBody")
    body_type = _body_type(media)
    return (
        _body_arguments(
            schema,
            body_type,
            bool(body.get("required")),
            body.get("description"),
            problems,
            arg_taken,
        ),
        body_type,
    )


def swagger_body(document: OpenAPIDocument, op, problems, arg_taken):
    params = []
    for raw in op.get("parameters") or []:
        try:
            param = document.resolver.resolve(raw)
        except RefError:
            continue
        if isinstance(param, dict) and param.get("in") in ("body", "formData"):
            params.append(param)
    body = [p for p in params if p["in"] == "body"]
    form = [p for p in params if p["in"] == "formData"]
    if body:
        schema = document.resolver.schema(body[0].get("schema", {}), problems, "body")
        return (
            _body_arguments(
                schema,
                "json",
                bool(body[0].get("required")),
                body[0].get("description"),
                problems,
                arg_taken,
            ),
            "json",
        )
    if form:
        consumes = op.get("consumes") or document.doc.get("consumes") or []
        has_file = any(p.get("type") == "file" for p in form)
        body_type = "multipart" if "multipart/form-data" in consumes or has_file else "form"
        arguments = []
        for param in form:
            wire = str(param["name"])
            raw_schema = {
                k: v for k, v in param.items() if k not in ("name", "in", "required", "description")
            }
            name = argument_name(wire)
            if name in arg_taken:
                name = argument_name(f"form_{wire}")
            arguments.append(
                Argument(
                    name=unique(name, arg_taken),
                    location="form",
                    wire_name=wire,
                    schema=document.resolver.schema(raw_schema, problems, f"formData {wire!r}"),
                    required=bool(param.get("required")),
                    description=str(param.get("description") or "").strip(),
                )
            )
        if has_file:
            problems.append("file uploads are sent as text form fields")
        return arguments, body_type
    return [], None


def _body_arguments(
    schema, body_type, required, description, problems, arg_taken
) -> list[Argument]:
    """An object body's properties become arguments of their own (what a model fills in
    best); anything else is one `body` argument."""
    flat = _flatten_object(schema) if body_type != "text" else None
    location = "form" if body_type in ("form", "multipart") else "body"
    if flat is not None:
        properties, required_props = flat
        arguments = []
        for prop, sub in properties.items():
            name = argument_name(prop)
            if name in arg_taken:  # a parameter has that name already
                name = argument_name(f"body_{prop}")
            arguments.append(
                Argument(
                    name=unique(name, arg_taken),
                    location=location,
                    wire_name=prop,
                    schema=sub,
                    required=required and prop in required_props,
                )
            )
        if required and not required_props and location == "body":
            problems.append(
                "requestBody: required, but none of its properties is; an empty object is sent"
            )
        return arguments
    if location == "form":
        problems.append("form body: not an object with properties; sent as one field `body`")
    return [
        Argument(
            name=unique("body", arg_taken),
            location="body",
            wire_name=None,
            schema=schema,
            required=required,
            description=str(description or "The request body.").strip(),
        )
    ]


def _pick_media_type(content: dict) -> str | None:
    types = list(content)
    for media in types:
        base = media.split(";")[0].strip().lower()
        if base == "application/json" or base.endswith("+json"):
            return media
    for wanted in FORM_TYPES:
        for media in types:
            if media.split(";")[0].strip().lower() == wanted:
                return media
    for media in types:
        if media.split(";")[0].strip().lower() in ("*/*", "application/*"):
            return media
    for media in types:
        if media.split(";")[0].strip().lower().startswith("text/"):
            return media
    return None


def _body_type(media: str) -> str:
    base = media.split(";")[0].strip().lower()
    if base == "application/x-www-form-urlencoded":
        return "form"
    if base == "multipart/form-data":
        return "multipart"
    if base.startswith("text/"):
        return "text"
    return "json"


def _flatten_object(schema: dict) -> tuple[dict, list] | None:
    """(properties, required) of an object schema, `allOf` of objects merged; None otherwise."""
    merged = _object_parts(schema)
    if merged is None or not merged[0]:
        return None
    properties, required = merged
    return properties, [r for r in required if r in properties]


def _object_parts(schema) -> tuple[dict, list] | None:
    if not isinstance(schema, dict) or "$ref" in schema or "oneOf" in schema or "anyOf" in schema:
        return None
    kind = schema.get("type", "object")
    if kind != "object" and kind != ["object"]:
        return None
    properties = dict(schema.get("properties") or {})
    required = list(schema.get("required") or [])
    for part in schema.get("allOf") or []:
        merged = _object_parts(part)
        if merged is None:
            return None
        properties.update(merged[0])
        required.extend(r for r in merged[1] if r not in required)
    return properties, required
