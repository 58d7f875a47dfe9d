"""Save-time check that every template of a part reads only names something provides.

What each template sees (docs/architecture.md, "Templates"):
- a static tool's result, a workflow's steps: the arguments (and the `into` of earlier steps);
- an http tool's request (url, headers, query, body, auth): the arguments and `secrets`;
- an http response `template`: `response`, `status`, `headers`, `args`;
- a prompt's messages and steps: its arguments (and the `into` of its steps);
- a resource template's text: the variables of its uriTemplate.

A name outside those renders as "" at run time, so it is refused here, naming the closest
known name. A tool whose input schema declares no properties, or says that it takes any other property
(`additionalProperties` true or a schema), takes arguments nobody listed: its templates are
not checked. (A schema that lists properties and says nothing of others is read as the list of
the arguments its templates mean: that is what the dashboard and every importer write.) Publishing and rollback do not run this check (servers/publishing.py): they freeze
or restore what was already saved, and refusing them would strand a server that was saved
before the check existed.
"""

from typing import Any

from .. import kinds, prompts
from ..kinds import TemplateScope
from ..template_names import unknown_name_problems

RESPONSE_NAMES = frozenset({"response", "status", "headers", "args"})
_COMBINERS = ("allOf", "anyOf", "oneOf")


def declared_arguments(schema: Any) -> set[str] | None:
    """The argument names an input schema lists; None when it admits arguments it does not
    list (then nothing can be told from it)."""
    if not isinstance(schema, dict):
        return None
    if any(key in schema for key in ("$ref", "patternProperties")):
        return None
    if schema.get("additionalProperties", False) not in (False, None):
        return None
    names: set[str] = set()
    found = False
    for part in [schema, *_branches(schema)]:
        properties = part.get("properties")
        if isinstance(properties, dict):
            found = True
            names.update(str(name) for name in properties)
    return names if found else None


def _branches(schema: dict) -> list[dict]:
    return [
        branch
        for key in _COMBINERS
        if isinstance(schema.get(key), list)
        for branch in schema[key]
        if isinstance(branch, dict)
    ]


def _intos(steps: Any) -> set[str]:
    """The `into` names of a list of workflow steps, inner steps of `all` included."""
    names: set[str] = set()
    for item in steps if isinstance(steps, list) else []:
        if not isinstance(item, dict):
            continue
        for name, body in item.items():
            if not isinstance(body, dict):
                continue
            if isinstance(body.get("into"), str):
                names.add(body["into"])
            if name == "all":
                names |= _intos(body.get("steps"))
    return names


def _http_problems(config: Any, path: str, known: set[str]) -> list[str]:
    if not isinstance(config, dict):
        return []
    request = {key: value for key, value in config.items() if key != "response"}
    problems = unknown_name_problems(
        request, path, known | {"secrets"}, what="arguments or secrets"
    )
    response = config.get("response")
    if isinstance(response, dict) and "template" in response:
        problems += unknown_name_problems(
            response["template"],
            f"{path}.response.template",
            set(RESPONSE_NAMES),
            what="response variables",
        )
    return problems


def _step_problems(steps: Any, path: str, known: set[str]) -> list[str]:
    problems: list[str] = []
    for index, item in enumerate(steps if isinstance(steps, list) else []):
        if not isinstance(item, dict):
            continue
        for name, body in item.items():
            where = f"{path}[{index}].{name}"
            if name == "http":
                problems += _http_problems(body, where, known)
            elif name == "all" and isinstance(body, dict):
                problems += _step_problems(body.get("steps"), f"{where}.steps", known)
            else:
                problems += unknown_name_problems(body, where, known)
    return problems


def tool_problems(path: str, tool: dict) -> list[str]:
    arguments = declared_arguments(tool.get("inputSchema") or {"type": "object"})
    config = tool.get("config")
    if arguments is None or not isinstance(config, dict):
        return []
    kind = kinds.find_kind(tool.get("kind", kinds.DEFAULT_KIND))
    scope = kind.template_scope if kind is not None else TemplateScope.NONE
    if scope is TemplateScope.RESULT:
        return unknown_name_problems(config, f"{path}.config", arguments)
    if scope is TemplateScope.REQUEST:
        return _http_problems(config, f"{path}.config", arguments)
    if scope is TemplateScope.STEPS:
        steps = config.get("steps")
        return _step_problems(steps, f"{path}.config.steps", arguments | _intos(steps))
    # code tools are Python, not templates; upstream tools pass calls on.
    return []


def prompt_problems(path: str, prompt: dict, arguments: set[str]) -> list[str]:
    config = prompt.get("config")
    steps = config.get("steps") if isinstance(config, dict) else None
    known = arguments | _intos(steps)
    problems = _step_problems(steps, f"{path}.config.steps", known) if steps else []
    if prompts.is_stored(prompt.get("kind", prompts.STATIC)):
        problems += unknown_name_problems(prompt.get("messages"), f"{path}.messages", known)
    return problems


def resource_template_problems(path: str, template: dict, variables: set[str]) -> list[str]:
    if not variables or not isinstance(template.get("text"), str):
        return []
    return unknown_name_problems(
        template["text"], f"{path}.text", variables, what="URI template variables"
    )
