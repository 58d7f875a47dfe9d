"""An operation's parameters (path, query, header, cookie) turned into tool arguments, with the
serialisations the `http` kind cannot reproduce named as problems."""

from ..preview import Argument, argument_name, identifier, unique
from ..schemas import RefError
from .document import OpenAPIDocument

# OpenAPI 3: header parameters with these names SHALL be ignored (the spec's own rule).
_IGNORED_HEADERS = {"accept", "content-type", "authorization"}


def operation_parameters(document: OpenAPIDocument, item, op, problems) -> list[dict]:
    """The path item's parameters and the operation's, the operation's winning a clash."""
    merged: dict[tuple, dict] = {}
    for level in (item.get("parameters"), op.get("parameters")):
        for raw in level or []:
            try:
                param = document.resolver.resolve(raw)
            except RefError as exc:
                problems.append(f"parameter: {exc}; skipped")
                continue
            if isinstance(param, dict) and "name" in param and "in" in param:
                merged[(param["name"], param["in"])] = param  # the operation's wins
    return list(merged.values())


def parameter_argument(document: OpenAPIDocument, param, problems, arg_taken) -> Argument | None:
    location, wire = param["in"], str(param["name"])
    if location in ("body", "formData"):  # Swagger 2.0; handled with the body
        return None
    if location not in ("path", "query", "header", "cookie"):
        problems.append(f"parameter {wire!r}: location {location!r} is not supported; skipped")
        return None
    if location == "header" and wire.lower() in _IGNORED_HEADERS:
        return None
    where = f"parameter {wire!r}"
    if document.dialect == "2.0":
        raw_schema = {
            k: v
            for k, v in param.items()
            if k
            not in (
                "name",
                "in",
                "required",
                "description",
                "collectionFormat",
                "allowEmptyValue",
            )
        }
        if param.get("type") == "array" and param.get("collectionFormat") != "multi":
            # Swagger's default is csv (a,b); the http kind repeats the parameter.
            fmt = param.get("collectionFormat") or "csv"
            problems.append(
                f"{where}: a {fmt} list upstream, sent as repeated values ({wire}=a&{wire}=b)"
            )
    elif "schema" in param:
        raw_schema = param["schema"]
    elif isinstance(param.get("content"), dict) and param["content"]:
        raw_schema = next(iter(param["content"].values())).get("schema", {})
    else:
        raw_schema = {}
        problems.append(f"{where}: no schema; any value accepted")
    schema = document.resolver.schema(raw_schema, problems, where)
    if document.dialect != "2.0":
        _style_problems(param, schema, location, wire, problems)
    if document.dialect != "2.0" and "example" in param and "examples" not in schema:
        schema["examples"] = [param["example"]]
    name = identifier(wire) if location == "path" else argument_name(wire)
    if name in arg_taken:
        name = argument_name(f"{location}_{wire}")
    return Argument(
        name=unique(name, arg_taken),
        location=location,
        wire_name=wire,
        schema=schema,
        required=bool(param.get("required")) or location == "path",
        description=str(param.get("description") or "").strip(),
    )


def _style_problems(param, schema, location, wire, problems) -> None:
    """Serialisations the http kind does not produce (it repeats list items, and sends
    objects as JSON text), said where a person reviews the import."""
    style = param.get("style") or ("form" if location in ("query", "cookie") else "simple")
    explode = param.get("explode", style == "form")
    kind = schema.get("type")
    is_list = kind == "array" or (isinstance(kind, list) and "array" in kind)
    is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
    where = f"parameter {wire!r}"
    if location == "query" and style == "deepObject":
        problems.append(f"{where}: deepObject style ({wire}[key]=value) is sent as JSON text")
    elif location == "query" and is_list and (not explode or style != "form"):
        problems.append(
            f"{where}: a {style}{'' if explode else ', not exploded,'} list upstream, "
            f"sent as repeated values ({wire}=a&{wire}=b)"
        )
    elif location == "query" and is_object:
        problems.append(f"{where}: an object, sent as JSON text")
