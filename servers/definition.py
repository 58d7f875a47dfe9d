"""The server-as-code format: load YAML/JSON, validate, export rows -> dict, import dict -> rows.

The dict shape is described in docs/architecture.md. Export omits optional fields that hold their
default value, so `export_definition(import_definition(x)) == normalize_definition(x)`, and a file
written in that canonical form round-trips byte for byte as data.
"""

import base64
import binascii
import json
import re
from pathlib import Path

import yaml
from django.db import IntegrityError, transaction

from mcp_protocol import uritemplate
from mcp_protocol.schemas import external_refs, schema_problems

from . import documents
from .models import SLUG_RE, TOOL_NAME_RE, Prompt, Resource, ResourceTemplate, Server, Tool


class DefinitionError(Exception):
    """A definition that cannot be imported; `errors` holds one message per problem, each
    starting with the path of the offending field."""

    def __init__(self, errors):
        if isinstance(errors, str):
            errors = [errors]
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


# --- loading ------------------------------------------------------------------------------------


def load_text(text: str, filename: str = "<input>") -> dict:
    """Parse a YAML or JSON document; errors name the line and column."""
    strict_json = filename.lower().endswith(".json")
    if strict_json or text.lstrip().startswith("{"):
        try:
            data = documents.load_json(text)
        except documents.DocumentError as exc:
            json_error = DefinitionError(f"{exc.where(filename)}: {exc.problem}")
            if strict_json:
                raise json_error from None
            # `{slug: a, ...}` is a YAML flow mapping, not broken JSON.
            try:
                data = _load_yaml(text, filename)
            except DefinitionError:
                raise json_error from None
    else:
        data = _load_yaml(text, filename)
    if not isinstance(data, dict):
        raise DefinitionError(f"{filename}: the document must be a mapping (a YAML/JSON object)")
    return data


def _load_yaml(text: str, filename: str):
    try:
        return documents.load_yaml(text)
    except documents.DocumentError as exc:
        raise DefinitionError(f"{exc.where(filename)}: {exc.problem}") from None


def load_file(path) -> dict:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise DefinitionError(f"{path}: not UTF-8 text") from None
    return load_text(text, str(path))


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        # A value used twice is written out twice: readers need not follow anchors.
        return True


def _represent_str(dumper, value):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_text(data: dict, fmt: str = "yaml") -> str:
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


# --- the format's fields --------------------------------------------------------------------------

# (wire key, model field, default). A field equal to its default is left out of an export;
# ALWAYS keys are written even then, so an exported file says what it means.
SERVER_FIELDS = [
    ("slug", "slug", None),
    ("name", "name", None),
    ("title", "title", ""),
    ("version", "version", "1.0.0"),
    ("instructions", "instructions", ""),
    ("icons", "icons", []),
    ("auth", "auth_mode", Server.AUTH_API_KEY),
    ("status", "status", Server.ACTIVE),
    ("allowedOrigins", "allowed_origins", []),
    ("http", "http", {}),
    ("code", "code", {}),
    ("rateLimitPerMinute", "rate_limit_per_minute", 0),
    ("logArguments", "log_arguments", False),
    ("roleAccess", "role_access", {}),
]
SERVER_ALWAYS = {"slug", "name", "version", "auth", "status"}
LISTS = ["tools", "resources", "resourceTemplates", "prompts"]

TOOL_FIELDS = [
    ("name", "name", None),
    ("title", "title", ""),
    ("description", "description", None),
    ("inputSchema", "input_schema", None),
    ("outputSchema", "output_schema", None),
    ("annotations", "annotations", {}),
    ("icons", "icons", []),
    ("execution", "execution", {}),
    ("_meta", "meta", {}),
    ("enabled", "enabled", True),
    ("kind", "kind", "static"),
    ("config", "config", {}),
]
TOOL_ALWAYS = {"name", "description", "inputSchema", "kind"}

RESOURCE_FIELDS = [
    ("uri", "uri", None),
    ("name", "name", None),
    ("title", "title", ""),
    ("description", "description", ""),
    ("mimeType", "mime_type", ""),
    ("text", "text", None),
    ("blob", "blob", None),
    ("size", "size", None),
    ("annotations", "annotations", {}),
    ("icons", "icons", []),
    ("_meta", "meta", {}),
    ("kind", "kind", "static"),
    ("config", "config", {}),
]
RESOURCE_ALWAYS = {"uri", "name"}

TEMPLATE_FIELDS = [
    ("uriTemplate", "uri_template", None),
    ("name", "name", None),
    ("title", "title", ""),
    ("description", "description", ""),
    ("mimeType", "mime_type", ""),
    ("text", "text", None),
    ("blob", "blob", None),
    ("completions", "completions", {}),
    ("annotations", "annotations", {}),
    ("icons", "icons", []),
    ("_meta", "meta", {}),
]
TEMPLATE_ALWAYS = {"uriTemplate", "name"}

PROMPT_FIELDS = [
    ("name", "name", None),
    ("title", "title", ""),
    ("description", "description", ""),
    ("arguments", "arguments", []),
    ("messages", "messages", []),
    ("completions", "completions", {}),
    ("icons", "icons", []),
    ("_meta", "meta", {}),
    ("kind", "kind", "static"),
    ("config", "config", {}),
]
PROMPT_ALWAYS = {"name", "description"}

PARTS = {
    # wire list -> (model, fields, always-written keys, related name on Server)
    "tools": (Tool, TOOL_FIELDS, TOOL_ALWAYS, "tools"),
    "resources": (Resource, RESOURCE_FIELDS, RESOURCE_ALWAYS, "resources"),
    "resourceTemplates": (ResourceTemplate, TEMPLATE_FIELDS, TEMPLATE_ALWAYS, "resource_templates"),
    "prompts": (Prompt, PROMPT_FIELDS, PROMPT_ALWAYS, "prompts"),
}

TASK_SUPPORT = {"forbidden", "optional", "required"}
ROLES = {"user", "assistant"}
CONTENT_TYPES = {"text", "image", "audio", "resource", "resource_link"}
_SLUG = re.compile(SLUG_RE)
_TOOL_NAME = re.compile(TOOL_NAME_RE)
_ORIGIN = re.compile(r"^https?://[^/\s?#]+$")
_TEMPLATE_VAR = re.compile(r"\{[+#./;?&]?([^{}]+)\}")


# --- validation ---------------------------------------------------------------------------------


def _is_template(value: str) -> bool:
    return "{{" in value or "{%" in value


def _valid_base64(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _type_name(value) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


class _Checker:
    def __init__(self):
        self.errors: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.errors.append(f"{path}: {message}")

    def keys(self, path: str, item: dict, allowed, required=()) -> None:
        for key in item:
            if key not in allowed:
                self.add(f"{path}.{key}" if path else str(key), "unknown field")
        for key in required:
            if key not in item or item[key] is None or item[key] == "":
                self.add(f"{path}.{key}" if path else key, "required")

    def string(self, path, item, key, *, required=False) -> bool:
        if key not in item:
            return False
        value = item[key]
        if not isinstance(value, str):
            if value is not None or required:
                self.add(
                    f"{path}.{key}" if path else key, f"must be a string, not {_type_name(value)}"
                )
            return False
        return True

    def kind_of(self, path, value, expected, label) -> bool:
        if isinstance(value, expected) and not (expected is not bool and isinstance(value, bool)):
            return True
        self.add(path, f"must be {label}, not {_type_name(value)}")
        return False

    def icons(self, path: str, icons) -> None:
        if not self.kind_of(path, icons, list, "a list"):
            return
        for i, icon in enumerate(icons):
            p = f"{path}[{i}]"
            if not self.kind_of(p, icon, dict, "a mapping"):
                continue
            self.keys(p, icon, {"src", "mimeType", "sizes", "theme"}, ["src"])
            if "src" in icon and not isinstance(icon["src"], str):
                self.add(f"{p}.src", "must be a string")

    def schema(self, path: str, schema) -> None:
        if not self.kind_of(path, schema, dict, "a mapping (a JSON Schema object)"):
            return
        problems = schema_problems(schema)
        for where, message in problems:
            self.add(f"{path}{where}", message)
        if problems:
            return
        for where in external_refs(schema):
            self.add(
                f"{path}.{where}",
                "must point inside the schema (#...); remote refs are not fetched",
            )
        if schema.get("type") != "object":
            self.add(f"{path}.type", "must be 'object'")


def validate_definition(data: dict) -> list[str]:
    """Every problem of a definition dict, one message each, naming the field path."""
    c = _Checker()
    if not isinstance(data, dict):
        return ["<root>: must be a mapping"]
    allowed = {key for key, _, _ in SERVER_FIELDS} | set(LISTS)
    c.keys("", data, allowed, ["slug", "name"])
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
    if "roleAccess" in data:
        from .access import role_access_problems

        c.errors.extend(role_access_problems(data["roleAccess"]))
    if "http" in data:
        from .kinds.http import validate_server_settings

        c.errors.extend(validate_server_settings(data["http"], "http"))
    if "code" in data:
        from .kinds.code.limits import validate_server_settings as validate_code_settings

        c.errors.extend(validate_code_settings(data["code"], "code"))
    for key in LISTS:
        if key in data and data[key] is not None and not isinstance(data[key], list):
            c.add(key, f"must be a list, not {_type_name(data[key])}")
    _validate_tools(c, data.get("tools") or [])
    _validate_resources(c, data.get("resources") or [])
    _validate_templates(c, data.get("resourceTemplates") or [])
    _validate_prompts(c, data.get("prompts") or [])
    return c.errors


def _items(c: _Checker, key: str, items):
    if not isinstance(items, list):
        return
    for i, item in enumerate(items):
        path = f"{key}[{i}]"
        if c.kind_of(path, item, dict, "a mapping"):
            yield i, path, item


def _unique(c: _Checker, seen: dict, path: str, value, what: str) -> None:
    if not isinstance(value, str):
        return
    if value in seen:
        c.add(path, f"duplicate {what} {value!r} (also at {seen[value]})")
    else:
        seen[value] = path


def _validate_tools(c: _Checker, tools) -> None:
    names: dict = {}
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
        execution = tool.get("execution")
        if execution is not None and c.kind_of(f"{path}.execution", execution, dict, "a mapping"):
            c.keys(f"{path}.execution", execution, {"taskSupport"})
            support = execution.get("taskSupport")
            if "taskSupport" in execution and support not in TASK_SUPPORT:
                c.add(
                    f"{path}.execution.taskSupport",
                    f"must be one of forbidden, optional, required, not {support!r}",
                )
        _validate_kind(c, path, tool)


def _validate_kind(c: _Checker, path: str, tool: dict) -> None:
    kind = tool.get("kind", "static")
    if not isinstance(kind, str):
        c.add(f"{path}.kind", f"must be a string, not {_type_name(kind)}")
        return
    config = tool.get("config", {})
    if not c.kind_of(f"{path}.config", config, dict, "a mapping"):
        return
    from . import kinds  # b2's package; imported late so this module loads without it

    try:
        module = kinds.get_kind(kind)
    except (KeyError, LookupError, ValueError):
        c.add(f"{path}.kind", f"unknown kind {kind!r}")
        return
    problems = module.validate_config(config)
    on_save = getattr(module, "validate_on_save", None)
    if not problems and on_save is not None:
        # Checks too costly for every snapshot compile (a code tool's parse), run on save.
        problems = on_save(config)
    for message in problems:
        # Kinds name their fields from `config` on; anything else is placed under it.
        where = "" if message.startswith("config") else "config."
        c.errors.append(f"{path}.{where}{message}")


def _templates(c: _Checker, path: str, value) -> None:
    from .templating import TemplateCompileError, compile_value

    try:
        compile_value(value)
    except TemplateCompileError as exc:
        c.add(path, str(exc))


def _validate_contents(c, path, item, *, template_ok: bool) -> None:
    has_text = item.get("text") is not None
    has_blob = item.get("blob") is not None
    if has_text == has_blob:
        c.add(path, "needs exactly one of text or blob")
    if has_text:
        c.string(path, item, "text")
    if has_blob and c.string(path, item, "blob"):
        blob = item["blob"]
        if not (template_ok and _is_template(blob)) and not _valid_base64(blob):
            c.add(f"{path}.blob", "must be valid base64")


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
    kind = res.get("kind", "static")
    if not isinstance(kind, str):
        c.add(f"{path}.kind", f"must be a string, not {_type_name(kind)}")
        return True
    config = res.get("config", {})
    if kind == "static":
        if config not in ({}, None):
            c.add(f"{path}.config", "only resources of kind fetched or upstream have a config")
        return True
    from . import resources

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


def _completions(c: _Checker, path: str, completions, names: set) -> None:
    if not c.kind_of(path, completions, dict, "a mapping"):
        return
    for name, values in completions.items():
        p = f"{path}.{name}"
        if name not in names:
            c.add(p, "names no argument/variable of this item")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            c.add(p, "must be a list of strings")


def _validate_templates(c: _Checker, templates) -> None:
    for _, path, tpl in _items(c, "resourceTemplates", templates):
        c.keys(path, tpl, {k for k, _, _ in TEMPLATE_FIELDS}, ["uriTemplate", "name"])
        variables: set = set()
        if c.string(path, tpl, "uriTemplate"):
            for group in _TEMPLATE_VAR.findall(tpl["uriTemplate"]):
                variables.update(v.strip().rstrip("*").split(":")[0] for v in group.split(","))
            if not variables:
                c.add(f"{path}.uriTemplate", "has no {variable}")
            else:
                try:
                    problem = uritemplate.ambiguity(tpl["uriTemplate"])
                except uritemplate.UriTemplateError as exc:
                    problem = str(exc)
                if problem:
                    c.add(f"{path}.uriTemplate", f"is refused: {problem}")
        for key in ("name", "title", "description", "mimeType"):
            c.string(path, tpl, key)
        _validate_contents(c, path, tpl, template_ok=True)
        if isinstance(tpl.get("text"), str):
            _templates(c, f"{path}.text", tpl["text"])
        if "completions" in tpl:
            _completions(c, f"{path}.completions", tpl["completions"], variables)
        for key in ("annotations", "_meta"):
            if key in tpl:
                c.kind_of(f"{path}.{key}", tpl[key], dict, "a mapping")
        if "icons" in tpl:
            c.icons(f"{path}.icons", tpl["icons"])


def validate_content_block(c: _Checker, path: str, block) -> None:
    if not c.kind_of(path, block, dict, "a mapping (a content block)"):
        return
    kind = block.get("type")
    if kind not in CONTENT_TYPES:
        c.add(f"{path}.type", f"must be one of {', '.join(sorted(CONTENT_TYPES))}, not {kind!r}")
        return
    common = {"type", "annotations", "_meta"}
    if kind == "text":
        c.keys(path, block, common | {"text"}, ["text"])
        c.string(path, block, "text")
    elif kind in ("image", "audio"):
        c.keys(path, block, common | {"data", "mimeType"}, ["data", "mimeType"])
        data = block.get("data")
        if c.string(path, block, "data") and not _is_template(data) and not _valid_base64(data):
            c.add(f"{path}.data", "must be valid base64")
    elif kind == "resource":
        c.keys(path, block, common | {"resource"}, ["resource"])
        res = block.get("resource")
        if res is not None and c.kind_of(f"{path}.resource", res, dict, "a mapping"):
            c.keys(f"{path}.resource", res, {"uri", "mimeType", "text", "blob", "_meta"}, ["uri"])
            _validate_contents(c, f"{path}.resource", res, template_ok=True)
    else:
        c.keys(
            path,
            block,
            common | {"uri", "name", "title", "description", "mimeType", "size", "icons"},
            ["uri", "name"],
        )


def _validate_prompt_kind(c: _Checker, path: str, prompt: dict) -> bool:
    """Checks `kind` and `config`; True when the prompt keeps its messages in the definition."""
    kind = prompt.get("kind", "static")
    if not isinstance(kind, str):
        c.add(f"{path}.kind", f"must be a string, not {_type_name(kind)}")
        return True
    config = prompt.get("config", {})
    if kind == "static":
        if config not in ({}, None):
            if not isinstance(config, dict) or set(config) != {"steps"}:
                c.add(f"{path}.config", "a static prompt's config may only hold steps")
            else:
                from .kinds import workflow

                c.errors.extend(
                    workflow.validate_prompt_steps(config["steps"], f"{path}.config.steps")
                )
        return True
    from . import prompts

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
        arg_names: dict = {}
        arguments = prompt.get("arguments", [])
        if c.kind_of(f"{path}.arguments", arguments, list, "a list"):
            for i, arg in enumerate(arguments):
                p = f"{path}.arguments[{i}]"
                if not c.kind_of(p, arg, dict, "a mapping"):
                    continue
                c.keys(p, arg, {"name", "title", "description", "required"}, ["name"])
                if c.string(p, arg, "name"):
                    _unique(c, arg_names, f"{p}.name", arg["name"], "argument name")
                if "required" in arg:
                    c.kind_of(f"{p}.required", arg["required"], bool, "true or false")
        messages = prompt.get("messages", [])
        if _validate_prompt_kind(c, path, prompt) and c.kind_of(
            f"{path}.messages", messages, list, "a list"
        ):
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
        if "completions" in prompt:
            _completions(c, f"{path}.completions", prompt["completions"], set(arg_names))
        if "_meta" in prompt:
            c.kind_of(f"{path}._meta", prompt["_meta"], dict, "a mapping")
        if "icons" in prompt:
            c.icons(f"{path}.icons", prompt["icons"])


# --- export and normal form ---------------------------------------------------------------------


def _canonical(values: dict, fields, always) -> dict:
    out = {}
    for key, _, default in fields:
        value = values.get(key, default)
        if key in always or value != default:
            out[key] = value
    return out


def normalize_definition(data: dict) -> dict:
    """The canonical form of a valid definition: what an export of its import gives back."""
    out = _canonical(data, SERVER_FIELDS, SERVER_ALWAYS)
    for key, (_, fields, always, _) in PARTS.items():
        items = [_canonical(item, fields, always) for item in data.get(key) or []]
        if items:
            out[key] = items
    return out


def export_definition(server: Server) -> dict:
    values = {key: getattr(server, attr) for key, attr, _ in SERVER_FIELDS}
    out = _canonical(values, SERVER_FIELDS, SERVER_ALWAYS)
    for key, (_, fields, always, related) in PARTS.items():
        rows = getattr(server, related).order_by("position", "id")
        items = [
            _canonical({k: getattr(row, attr) for k, attr, _ in fields}, fields, always)
            for row in rows
        ]
        if items:
            out[key] = items
    return out


# --- import -------------------------------------------------------------------------------------


def _row_values(item: dict, fields) -> dict:
    values = {}
    for key, attr, default in fields:
        value = item.get(key, default)
        if value is None and default is not None:
            value = default
        values[attr] = value
    return values


def import_definition(data: dict, organization, *, replace: bool = False, user=None) -> Server:
    """Create a server (or with `replace`, rewrite one of the same organization) from a dict."""
    errors = validate_definition(data)
    if errors:
        raise DefinitionError(errors)
    if user is not None and not organization.memberships.filter(user=user).exists():
        raise DefinitionError("organization: you are not a member of this organization")
    slug = data["slug"]
    server_values = {
        attr: data.get(key, default) for key, attr, default in SERVER_FIELDS if key != "slug"
    }
    try:
        with transaction.atomic():
            server = Server.objects.select_for_update().filter(slug=slug).first()
            if server is not None and server.organization_id != organization.pk:
                raise DefinitionError("slug: already taken")
            if server is not None and not replace:
                raise DefinitionError(
                    f"slug: this organization already has a server {slug!r}; "
                    "import with --replace to replace its definition"
                )
            if server is None:
                server = Server.objects.create(
                    organization=organization, slug=slug, **server_values
                )
            else:
                for attr, value in server_values.items():
                    setattr(server, attr, value)
                server.save()
                for _, _, _, related in PARTS.values():
                    getattr(server, related).all().delete()
            for key, (model, fields, _, _) in PARTS.items():
                for position, item in enumerate(data.get(key) or []):
                    model.objects.create(
                        server=server, position=position, **_row_values(item, fields)
                    )
    except IntegrityError:
        # Another import took the slug between our check and our insert.
        raise DefinitionError("slug: already taken") from None
    return server
