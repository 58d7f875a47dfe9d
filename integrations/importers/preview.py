"""What an import found before anything is saved, and how the selected part of it is saved.

Parsing (openapi/, postman/) only builds an ImportPreview; `commit_import` (reimport.py) is
the one step that writes rows. Imported tools land as drafts: `enabled=False`, so nobody's clients see them
until their owner has reviewed the mapping and the secrets they need and switched them on.
"""

import re
from dataclasses import asdict, dataclass, field

MAX_NAME = 64
_NAME_JUNK = re.compile(r"[^A-Za-z0-9_.\-/]+")
_ARGUMENT_JUNK = re.compile(r"[^A-Za-z0-9_.\-]+")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class ImportFailed(ValueError):
    """A document that cannot be imported at all (not the format, unreadable, no operations)."""


@dataclass
class Argument:
    """One tool argument and where it goes in the upstream request."""

    name: str  # the argument name the model sees (a property of inputSchema)
    location: str  # path | query | header | cookie | body | form
    wire_name: str | None  # the parameter/field name upstream; None: the whole body
    schema: dict
    required: bool = False
    description: str = ""


@dataclass
class ImportedOperation:
    name: str
    source: str  # "GET /pets/{petId}" or the Postman folder path: how a person finds it again
    operation_id: str | None
    title: str
    description: str
    method: str
    input_schema: dict
    config: dict  # a config of the `http` tool kind
    annotations: dict = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    arguments: list[Argument] = field(default_factory=list)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["arguments"] = [
            {"name": a.name, "in": a.location, "wireName": a.wire_name, "required": a.required}
            for a in self.arguments
        ]
        return data


@dataclass
class ImportPreview:
    format: str  # openapi-3.0 | openapi-3.1 | swagger-2.0 | postman-2.1
    title: str
    version: str
    base_url: str | None
    operations: list[ImportedOperation]
    secrets: list[str] = field(default_factory=list)  # secret names the tools' auth refers to
    auth: list[dict] = field(default_factory=list)  # the auth settings found, by scheme
    # connection providers the document's authorization-code flows propose (key, name,
    # authorizationUrl, tokenUrl, scopes); the tools needing one name it in `connection`
    providers: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # about the document as a whole

    def to_dict(self) -> dict:
        return {
            "format": self.format,
            "title": self.title,
            "version": self.version,
            "baseUrl": self.base_url,
            "secrets": self.secrets,
            "auth": self.auth,
            "providers": self.providers,
            "problems": self.problems,
            "operations": [op.to_dict() for op in self.operations],
        }

    @classmethod
    def from_dict(cls, data: dict) -> "ImportPreview":
        """The preview `to_dict` gave (kept between the preview and the commit requests)."""
        try:
            operations = [
                ImportedOperation(
                    name=op["name"],
                    source=op["source"],
                    operation_id=op.get("operation_id"),
                    title=op.get("title", ""),
                    description=op.get("description", ""),
                    method=op["method"],
                    input_schema=op["input_schema"],
                    config=op["config"],
                    annotations=op.get("annotations") or {},
                    problems=list(op.get("problems") or []),
                    arguments=[
                        Argument(
                            name=a["name"],
                            location=a["in"],
                            wire_name=a.get("wireName"),
                            schema=op["input_schema"].get("properties", {}).get(a["name"], {}),
                            required=bool(a.get("required")),
                        )
                        for a in op.get("arguments") or []
                    ],
                )
                for op in data["operations"]
            ]
            return cls(
                format=data["format"],
                title=data.get("title", ""),
                version=data.get("version", ""),
                base_url=data.get("baseUrl"),
                operations=operations,
                secrets=list(data.get("secrets") or []),
                auth=list(data.get("auth") or []),
                providers=[p for p in data.get("providers") or [] if isinstance(p, dict)],
                problems=list(data.get("problems") or []),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ImportFailed(
                f"preview: not a preview this importer made ({exc!r} missing)"
            ) from None

    def find(self, key: str) -> ImportedOperation | None:
        """An operation by tool name, operationId or source ("GET /pets")."""
        for op in self.operations:
            if key in (op.name, op.operation_id, op.source):
                return op
        return None


def snake(text: str) -> str:
    text = _CAMEL_BOUNDARY.sub("_", text.strip())
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


def tool_name(raw: str) -> str:
    """A name MCP accepts: <= 64 chars of [A-Za-z0-9_./-]."""
    name = _NAME_JUNK.sub("_", raw.strip()).strip("_") or "operation"
    return name[:MAX_NAME].rstrip("_") or "operation"


def argument_name(raw: str) -> str:
    name = _ARGUMENT_JUNK.sub("_", raw.strip()).strip("_") or "value"
    return name[:MAX_NAME]


def identifier(raw: str) -> str:
    """A name usable as a `{placeholder}` in a URL template: [A-Za-z_][A-Za-z0-9_]*."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", raw.strip()).strip("_") or "value"
    return ("_" + name if name[0].isdigit() else name)[:MAX_NAME]


def unique(name: str, taken: set[str], limit: int = MAX_NAME) -> str:
    """`name`, or `name_2`, `name_3`... - the first one not in `taken` (which it joins)."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        suffix = f"_{n}"
        candidate = name[: limit - len(suffix)] + suffix
    taken.add(candidate)
    return candidate


def secret_placeholder(secret: str) -> str:
    return "{{ secrets." + secret + " }}"


def secret_name(*parts: str) -> str:
    """An upper-case secret name such as PETSTORE_API_KEY, made of the parts given."""
    words = [snake(p).upper() for p in parts if p and snake(p)]
    name = "_".join(words) or "API_SECRET"
    # A secret name that repeats itself (PETSTORE_PETSTORE_AUTH) reads badly; drop the echo.
    tokens: list[str] = []
    for token in name.split("_"):
        if not tokens or tokens[-1] != token:
            tokens.append(token)
    name = "_".join(tokens)
    if name[0].isdigit():
        name = "S_" + name
    return name[:64]


def annotations_for(method: str) -> dict:
    method = method.upper()
    if method in ("GET", "HEAD", "OPTIONS"):
        return {"readOnlyHint": True, "openWorldHint": True}
    if method == "DELETE":
        return {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": True,
            "openWorldHint": True,
        }
    if method == "PUT":
        return {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": True,
            "openWorldHint": True,
        }
    return {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": True}


def input_schema(arguments: list[Argument], defs: dict | None = None) -> dict:
    schema: dict = {"type": "object", "properties": {}}
    required = []
    for arg in arguments:
        prop = dict(arg.schema)
        if arg.description and "description" not in prop:
            prop["description"] = arg.description
        schema["properties"][arg.name] = prop
        if arg.required:
            required.append(arg.name)
    if required:
        schema["required"] = required
    if defs:
        schema["$defs"] = defs
    return schema


def describe(summary: str, details: str) -> str:
    """One description from an operation's summary and description, without saying the same
    thing twice: documents often repeat the summary as the description's first sentence
    ("List users" + "List users. Returns...")."""
    summary, details = summary.strip(), details.strip()
    if not summary or not details:
        return summary or details

    def plain(text: str) -> str:
        return " ".join(text.lower().split()).rstrip(".!:; ")

    if plain(details).startswith(plain(summary)):
        return details
    return f"{summary}\n\n{details}"


def validate_operations(preview: ImportPreview) -> None:
    """Add a problem to each operation whose config the `http` kind would refuse, or whose
    templates read a name its arguments do not provide."""
    try:
        from servers.kinds.http.kind import KIND as HTTP
    except ImportError:  # the http kind is not installed in this build
        return
    from servers.definition.template_scope import tool_problems

    for op in preview.operations:
        problems = HTTP.validate_config(op.config)
        if not problems:
            tool = {"kind": HTTP.name, "inputSchema": op.input_schema, "config": op.config}
            problems = [p.removeprefix("tool.config.") for p in tool_problems("tool", tool)]
        for message in problems:
            op.problems.append(f"http config: {message}")
