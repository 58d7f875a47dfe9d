"""validate_definition: every problem of a definition dict, each naming the path of its field."""

from mcp_protocol import uritemplate

from ..models import Server
from ..views.spec import view_problems
from . import template_scope
from .checks import (
    _Checker,
    _completions,
    _items,
    _templates,
    _type_name,
    _unique,
    _validate_contents,
    validate_content_block,
)
from .fields import (
    _ORIGIN,
    _SLUG,
    _TEMPLATE_VAR,
    _TOOL_NAME,
    LISTS,
    PROMPT_FIELDS,
    RESOURCE_FIELDS,
    ROLES,
    SERVER_FIELDS,
    TASK_SUPPORT,
    TEMPLATE_FIELDS,
    TOOL_FIELDS,
)


def validate_definition(data: dict, *, template_names: bool = True) -> list[str]:
    """Every problem of a definition dict, one message each, naming the field path.

    `template_names=False` skips the check that templates read only names their part provides
    (definition/template_scope.py): for restoring a version that was already served."""
    c = _Checker()
    c.template_names = template_names
    if not isinstance(data, dict):
        return ["<root>: must be a mapping"]
    allowed = {key for key, _, _ in SERVER_FIELDS} | set(LISTS)
    c.keys("", data, allowed, ["slug", "name"])
    _validate_identity(c, data)
    _validate_serving(c, data)
    _validate_sections(c, data)
    for key in LISTS:
        if key in data and data[key] is not None and not isinstance(data[key], list):
            c.add(key, f"must be a list, not {_type_name(data[key])}")
    _validate_tools(c, data.get("tools") or [])
    _validate_resources(c, data.get("resources") or [])
    _validate_templates(c, data.get("resourceTemplates") or [])
    _validate_prompts(c, data.get("prompts") or [])
    return c.errors


def template_name_problems(data: dict) -> list[str]:
    """Only the template-name problems of a definition (for warnings where refusing would
    break a definition saved before the check existed, as at publish time)."""
    others = set(validate_definition(data, template_names=False))
    return [problem for problem in validate_definition(data) if problem not in others]


def _validate_identity(c: _Checker, data: dict) -> None:
    """What the server is called: slug, name, title, version, instructions."""
    if c.string("", data, "slug") and not _SLUG.match(data["slug"]):
        c.add(
            "slug", "must be 2-63 characters of a-z, 0-9 and '-', starting with a letter or digit"
        )
    if c.string("", data, "name") and len(data["name"]) > 100:
        c.add("name", "must be at most 100 characters")
    if c.string("", data, "title") and len(data["title"]) > 200:
        c.add("title", "must be at most 200 characters")
    if c.string("", data, "version") and not 0 < len(data["version"]) <= 40:
        c.add("version", "must be 1-40 characters")
    c.string("", data, "instructions")


def _validate_serving(c: _Checker, data: dict) -> None:
    """How it is served: auth mode, status, icons, origins, argument logging, rate limit."""
    auth_modes = [mode for mode, _label in Server.AUTH_MODES]
    if "auth" in data and data["auth"] not in auth_modes:
        c.add("auth", f"must be one of {', '.join(auth_modes)}, not {data['auth']!r}")
    statuses = {s for s, _ in Server.STATUSES}
    if "status" in data and data["status"] not in statuses:
        c.add("status", f"must be one of active, paused, draft, not {data['status']!r}")
    if "icons" in data:
        c.icons("icons", data["icons"])
    if "allowedOrigins" in data and c.kind_of(
        "allowedOrigins", data["allowedOrigins"], list, "a list"
    ):
        for i, origin in enumerate(data["allowedOrigins"]):
            if not isinstance(origin, str) or not _ORIGIN.match(origin):
                c.add(f"allowedOrigins[{i}]", "must be an origin like https://app.example.com")
    if not isinstance(data.get("logArguments", False), bool):
        c.add("logArguments", "must be true or false")
    limit = data.get("rateLimitPerMinute", 0)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= 1_000_000:
        c.add("rateLimitPerMinute", "must be a whole number from 0 (no limit) to 1000000")


def _validate_sections(c: _Checker, data: dict) -> None:
    """The sections other modules own, each checked by its owner."""
    if "roleAccess" in data:
        from ..access import role_access_problems

        c.errors.extend(role_access_problems(data["roleAccess"]))
    from .. import kinds

    for kind in kinds.KINDS.values():
        if kind.server_settings and kind.server_settings in data:
            key = kind.server_settings
            c.errors.extend(kind.validate_server_settings(data[key], key))
    if "agents" in data:
        from servers.discovery.config import validate_server as validate_agent_settings

        c.errors.extend(validate_agent_settings(data["agents"], "agents"))


def _validate_tools(c: _Checker, tools) -> None:
    names: dict = {}
    # A form view names another tool of the server.
    listed = tools if isinstance(tools, list) else []
    tool_names = {tool.get("name") for tool in listed if isinstance(tool, dict)}
    for _, path, tool in _items(c, "tools", tools):
        c.keys(path, tool, {k for k, _, _ in TOOL_FIELDS}, ["name", "description", "inputSchema"])
        if c.string(path, tool, "name"):
            if not _TOOL_NAME.match(tool["name"]):
                c.add(f"{path}.name", "must be at most 64 characters of [A-Za-z0-9_./-]")
            _unique(c, names, f"{path}.name", tool["name"], "tool name")
        c.string(path, tool, "title")
        c.string(path, tool, "description")
        if tool.get("inputSchema") is not None:
            c.schema(f"{path}.inputSchema", tool["inputSchema"])
        if tool.get("outputSchema") is not None:
            c.schema(f"{path}.outputSchema", tool["outputSchema"])
        for key in ("annotations", "_meta"):
            if key in tool:
                c.kind_of(f"{path}.{key}", tool[key], dict, "a mapping")
        if "icons" in tool:
            c.icons(f"{path}.icons", tool["icons"])
        if "enabled" in tool:
            c.kind_of(f"{path}.enabled", tool["enabled"], bool, "true or false")
        if "pinned" in tool:
            c.kind_of(f"{path}.pinned", tool["pinned"], bool, "true or false")
        if "outputBudget" in tool:
            from servers.discovery.config import validate_tool_budget

            c.errors.extend(validate_tool_budget(tool["outputBudget"], f"{path}.outputBudget"))
        _validate_execution(c, path, tool.get("execution"))
        if "view" in tool:
            c.errors.extend(view_problems(tool["view"], f"{path}.view", tool_names))
        before = len(c.errors)
        _validate_kind(c, path, tool)
        if c.template_names and len(c.errors) == before:
            c.errors.extend(template_scope.tool_problems(path, tool))


def _validate_execution(c: _Checker, path: str, execution) -> None:
    if execution is None or not c.kind_of(f"{path}.execution", execution, dict, "a mapping"):
        return
    c.keys(f"{path}.execution", execution, {"taskSupport"})
    support = execution.get("taskSupport")
    if "taskSupport" in execution and support not in TASK_SUPPORT:
        c.add(
            f"{path}.execution.taskSupport",
            f"must be one of forbidden, optional, required, not {support!r}",
        )


def _validate_kind(c: _Checker, path: str, tool: dict) -> None:
    from .. import kinds  # b2's package; imported late so this module loads without it

    kind = tool.get("kind", kinds.DEFAULT_KIND)
    if not isinstance(kind, str):
        c.add(f"{path}.kind", f"must be a string, not {_type_name(kind)}")
        return
    config = tool.get("config", {})
    if not c.kind_of(f"{path}.config", config, dict, "a mapping"):
        return
    contract = kinds.find_kind(kind)
    if contract is None:
        c.add(f"{path}.kind", f"unknown kind {kind!r}")
        return
    execution = tool.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, dict) else None
    if support in ("optional", "required") and not contract.runs_as_task:
        c.add(f"{path}.execution.taskSupport", f"a {kind} tool cannot run as a task")
    problems = contract.validate_config(config)
    if not problems:
        # Checks too costly for every snapshot compile (a code tool's parse), run on save.
        problems = contract.validate_on_save(config)
    for message in problems:
        # Kinds name their fields from `config` on; anything else is placed under it.
        where = "" if message.startswith("config") else "config."
        c.errors.append(f"{path}.{where}{message}")


def _validate_resources(c: _Checker, resources) -> None:
    uris: dict = {}
    for _, path, res in _items(c, "resources", resources):
        c.keys(path, res, {k for k, _, _ in RESOURCE_FIELDS}, ["uri", "name"])
        if c.string(path, res, "uri"):
            if ":" not in res["uri"]:
                c.add(f"{path}.uri", "must be an absolute URI (scheme:...)")
            _unique(c, uris, f"{path}.uri", res["uri"], "resource uri")
        for key in ("name", "title", "description", "mimeType"):
            c.string(path, res, key)
        if _validate_resource_kind(c, path, res):
            _validate_contents(c, path, res, template_ok=False)
        if res.get("size") is not None and (
            not isinstance(res["size"], int) or isinstance(res["size"], bool) or res["size"] < 0
        ):
            c.add(f"{path}.size", "must be a non-negative integer")
        for key in ("annotations", "_meta"):
            if key in res:
                c.kind_of(f"{path}.{key}", res[key], dict, "a mapping")
        if "icons" in res:
            c.icons(f"{path}.icons", res["icons"])


def _validate_resource_kind(c: _Checker, path: str, res: dict) -> bool:
    """Checks `kind` and `config`; True when the resource keeps its content in the definition."""
    from .. import resources

    kind = res.get("kind", resources.STATIC)
    if not isinstance(kind, str):
        c.add(f"{path}.kind", f"must be a string, not {_type_name(kind)}")
        return True
    config = res.get("config", {})
    if resources.is_stored(kind):
        if config not in ({}, None):
            c.add(f"{path}.config", "only resources of kind fetched or upstream have a config")
        return True
    try:
        module = resources.get_kind(kind)
    except ValueError:
        c.add(f"{path}.kind", f"unknown kind {kind!r} (known kinds: fetched, static, upstream)")
        return False
    for key in ("text", "blob"):
        if res.get(key) is not None:
            article = "an" if kind[0] in "aeiou" else "a"
            c.add(f"{path}.{key}", f"{article} {kind} resource reads its content; it has no {key}")
    if c.kind_of(f"{path}.config", config, dict, "a mapping"):
        for message in module.validate_config(config):
            c.errors.append(f"{path}.{message}")
    return False


def _validate_templates(c: _Checker, templates) -> None:
    for _, path, tpl in _items(c, "resourceTemplates", templates):
        c.keys(path, tpl, {k for k, _, _ in TEMPLATE_FIELDS}, ["uriTemplate", "name"])
        variables: set = set()
        if c.string(path, tpl, "uriTemplate"):
            variables = _template_variables(c, path, tpl["uriTemplate"])
        for key in ("name", "title", "description", "mimeType"):
            c.string(path, tpl, key)
        _validate_contents(c, path, tpl, template_ok=True)
        if isinstance(tpl.get("text"), str):
            before = len(c.errors)
            _templates(c, f"{path}.text", tpl["text"])
            if c.template_names and len(c.errors) == before:
                c.errors.extend(template_scope.resource_template_problems(path, tpl, variables))
        if "completions" in tpl:
            _completions(c, f"{path}.completions", tpl["completions"], variables)
        for key in ("annotations", "_meta"):
            if key in tpl:
                c.kind_of(f"{path}.{key}", tpl[key], dict, "a mapping")
        if "icons" in tpl:
            c.icons(f"{path}.icons", tpl["icons"])


def _template_variables(c: _Checker, path: str, uri_template: str) -> set:
    """The variables of a resource template's uriTemplate; one with none, or one whose
    variables could match a URI in two ways, is refused."""
    variables: set = set()
    for group in _TEMPLATE_VAR.findall(uri_template):
        variables.update(v.strip().rstrip("*").split(":")[0] for v in group.split(","))
    if not variables:
        c.add(f"{path}.uriTemplate", "has no {variable}")
        return variables
    try:
        problem = uritemplate.ambiguity(uri_template)
    except uritemplate.UriTemplateError as exc:
        problem = str(exc)
    if problem:
        c.add(f"{path}.uriTemplate", f"is refused: {problem}")
    return variables


def _validate_prompt_kind(c: _Checker, path: str, prompt: dict) -> bool:
    """Checks `kind` and `config`; True when the prompt keeps its messages in the definition."""
    from .. import prompts

    kind = prompt.get("kind", prompts.STATIC)
    if not isinstance(kind, str):
        c.add(f"{path}.kind", f"must be a string, not {_type_name(kind)}")
        return True
    config = prompt.get("config", {})
    if prompts.is_stored(kind):
        if config not in ({}, None):
            if not isinstance(config, dict) or set(config) != {"steps"}:
                c.add(f"{path}.config", "a static prompt's config may only hold steps")
            else:
                from ..kinds import workflow

                c.errors.extend(
                    workflow.validate_prompt_steps(config["steps"], f"{path}.config.steps")
                )
        return True
    try:
        module = prompts.get_kind(kind)
    except ValueError:
        c.add(f"{path}.kind", f"unknown kind {kind!r} (known kinds: static, upstream)")
        return False
    if prompt.get("messages") not in (None, []):
        article = "an" if kind[0] in "aeiou" else "a"
        c.add(f"{path}.messages", f"{article} {kind} prompt gets its messages; it has none here")
    if c.kind_of(f"{path}.config", config, dict, "a mapping"):
        for message in module.validate_config(config):
            c.errors.append(f"{path}.{message}")
    return False


def _validate_prompts(c: _Checker, prompts) -> None:
    names: dict = {}
    for _, path, prompt in _items(c, "prompts", prompts):
        c.keys(path, prompt, {k for k, _, _ in PROMPT_FIELDS}, ["name", "description"])
        if c.string(path, prompt, "name"):
            _unique(c, names, f"{path}.name", prompt["name"], "prompt name")
        for key in ("title", "description"):
            c.string(path, prompt, key)
        arg_names = _validate_prompt_arguments(c, path, prompt.get("arguments", []))
        messages = prompt.get("messages", [])
        if _validate_prompt_kind(c, path, prompt) and c.kind_of(
            f"{path}.messages", messages, list, "a list"
        ):
            _validate_prompt_messages(c, path, messages)
        if "completions" in prompt:
            _completions(c, f"{path}.completions", prompt["completions"], set(arg_names))
        if c.template_names and not any(e.startswith(f"{path}.") for e in c.errors):
            c.errors.extend(template_scope.prompt_problems(path, prompt, set(arg_names)))
        if "_meta" in prompt:
            c.kind_of(f"{path}._meta", prompt["_meta"], dict, "a mapping")
        if "icons" in prompt:
            c.icons(f"{path}.icons", prompt["icons"])


def _validate_prompt_arguments(c: _Checker, path: str, arguments) -> dict:
    """Checks a prompt's arguments; returns their names (for its completions)."""
    arg_names: dict = {}
    if not c.kind_of(f"{path}.arguments", arguments, list, "a list"):
        return arg_names
    for i, arg in enumerate(arguments):
        p = f"{path}.arguments[{i}]"
        if not c.kind_of(p, arg, dict, "a mapping"):
            continue
        c.keys(p, arg, {"name", "title", "description", "required"}, ["name"])
        if c.string(p, arg, "name"):
            _unique(c, arg_names, f"{p}.name", arg["name"], "argument name")
        if "required" in arg:
            c.kind_of(f"{p}.required", arg["required"], bool, "true or false")
    return arg_names


def _validate_prompt_messages(c: _Checker, path: str, messages: list) -> None:
    if not messages:
        c.add(f"{path}.messages", "needs at least one message")
    for i, msg in enumerate(messages):
        p = f"{path}.messages[{i}]"
        if not c.kind_of(p, msg, dict, "a mapping"):
            continue
        c.keys(p, msg, {"role", "content"}, ["role", "content"])
        if "role" in msg and msg["role"] not in ROLES:
            c.add(f"{p}.role", f"must be user or assistant, not {msg['role']!r}")
        if msg.get("content") is not None:
            validate_content_block(c, f"{p}.content", msg["content"])
            _templates(c, f"{p}.content", msg["content"])
