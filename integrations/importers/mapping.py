"""The `http` tool kind's config (servers/kinds/http.py), built from what an importer found.

Kept in one place so that when the kind's config format moves, only this module follows it.
"""

from .preview import Argument

# A whole-body argument is sent through a body template: one expression keeps its JSON type.
WHOLE_BODY = "{{ %s }}"


def http_config(
    *,
    method: str,
    url: str,
    arguments: list[Argument],
    auth: list[dict] | None = None,
    headers: dict | None = None,
    body_type: str | None = None,
    problems: list[str] | None = None,
) -> dict:
    """`url` keeps `{name}` placeholders for path arguments, named by the argument.

    Argument locations are the importers' (path, query, header, cookie, body, form); `body`
    with no wire name is the whole body.
    """
    problems = problems if problems is not None else []
    config: dict = {"method": method.upper(), "url": url}
    parameters: dict = {}
    fixed_headers = dict(headers or {})
    fixed_query: dict = {}
    for arg in arguments:
        if arg.location == "body" and arg.wire_name is None:
            config["body"] = WHOLE_BODY % arg.name
        elif arg.location == "cookie":
            problems.append(
                f"cookie parameter {arg.wire_name!r}: not sent (the http kind sends no cookies)"
            )
        else:
            parameters[arg.name] = _parameter(arg, body_type)
    if parameters:
        config["parameters"] = parameters
    if fixed_headers:
        config["headers"] = fixed_headers
    if body_type:
        config["bodyType"] = body_type
    settings = list(auth or [])
    if settings:
        config["auth"] = settings[0]
        _fixed_credentials(config, settings[1:], fixed_headers, fixed_query, problems)
    if fixed_query:
        config["query"] = fixed_query
    if not config.get("headers"):
        config.pop("headers", None)
    return config


def _parameter(arg: Argument, body_type: str | None):
    """How the http kind's config names where an argument goes."""
    location = arg.location
    if location == "form" and body_type == "multipart":
        location = "multipart"
    entry: dict = {"in": location}
    if arg.wire_name != arg.name:
        entry["name"] = arg.wire_name
    if location == "multipart" and arg.schema.get("format") == "binary":
        entry["filename"] = arg.wire_name
    # The short form says the same when nothing is renamed.
    return entry if len(entry) > 1 else location


def _fixed_credentials(config, extras, fixed_headers, fixed_query, problems) -> None:
    """Schemes required together: the first one is the auth, the others fixed credentials."""
    for extra in extras:
        if extra.get("type") == "apiKey":
            target = fixed_query if extra.get("in") == "query" else fixed_headers
            target[extra["name"]] = extra["value"]
            config["headers"] = fixed_headers
        else:
            problems.append(
                f"auth: a second {extra.get('type')} credential cannot be sent too; only the first is"
            )
