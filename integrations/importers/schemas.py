"""Local `$ref` resolution and OpenAPI/Swagger schemas turned into JSON Schema 2020-12.

Only refs inside the document (`#/...`) are followed: fetching other files or URLs named by a
spec would let an uploaded document make the server read arbitrary locations.
"""

import copy
from urllib.parse import unquote

from mcp_protocol.schemas import schema_problems as tenant_schema_problems

# OpenAPI-only keywords with no JSON Schema meaning for a tool's arguments.
_DROPPED = {"xml", "externalDocs", "discriminator", "example", "x-nullable", "nullable"}
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMAS = (
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
)
MAX_DEPTH = 40


class RefError(ValueError):
    pass


class Resolver:
    """Follows local refs of one document. `dialect` is "2.0", "3.0" or "3.1"."""

    def __init__(self, document: dict, dialect: str) -> None:
        self.document = document
        self.dialect = dialect
        self.defs: dict[str, dict] = {}  # recursive schemas, kept under the tool schema's $defs
        self._problems: list[str] = []
        self._where = ""
        self._def_names: dict[str, str] = {}

    def lookup(self, ref: str):
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise RefError(
                f"$ref {ref!r} points outside this document; only local refs are resolved"
            )
        node = self.document
        pointer = ref[1:]
        if pointer and not pointer.startswith("/"):
            raise RefError(f"$ref {ref!r} is not a JSON pointer")
        for raw in pointer.split("/")[1:]:
            part = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise RefError(f"$ref {ref!r} does not resolve")
        return node

    def resolve(self, node):
        """`node` with refs followed (a parameter, a request body, a response...)."""
        seen = set()
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if ref in seen:
                raise RefError(f"$ref {ref!r} refers to itself")
            seen.add(ref)
            node = self.lookup(ref)
        return node

    def schema(self, node, problems: list[str], where: str, *, request: bool = True) -> dict:
        """A JSON Schema 2020-12 for an OpenAPI schema, refs inlined; recursive refs kept as
        `#/$defs/<name>` (call `take_defs` to collect them). `request`: drop readOnly properties
        (a client never sends them)."""
        self._problems, self._where = problems, where
        return self._convert(node, [], request)

    def take_defs(self) -> dict:
        defs, self.defs, self._def_names = self.defs, {}, {}
        return defs

    def _def_name(self, ref: str) -> str:
        if ref not in self._def_names:
            base = ref.rsplit("/", 1)[-1] or "schema"
            name, n = base, 1
            while name in self._def_names.values():
                n += 1
                name = f"{base}_{n}"
            self._def_names[ref] = name
        return self._def_names[ref]

    def _convert(self, node, stack: list[str], request: bool) -> dict:
        if isinstance(node, bool):
            return {} if node else {"not": {}}
        if not isinstance(node, dict) or len(stack) > MAX_DEPTH:
            return {}
        if "$ref" in node:
            return self._convert_ref(node, stack, request)
        out: dict = {}
        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-"):
                continue
            self._convert_keyword(out, key, value, stack, request)
        self._dialect_fixes(node, out)
        if request:
            self._drop_read_only(node, out)
        return out

    def _convert_ref(self, node: dict, stack: list[str], request: bool) -> dict:
        ref = node["$ref"]
        try:
            self.lookup(ref)
        except RefError as exc:
            self._problems.append(f"{self._where}: {exc}; that part accepts any value")
            return {}
        if ref in stack:
            name = self._def_name(ref)
            if name not in self.defs:
                self.defs[name] = {}  # placeholder: stops the recursion below re-entering
                self.defs[name] = self._convert(self.lookup(ref), [*stack, ref], request)
            return {"$ref": f"#/$defs/{name}"}
        target = self._convert(self.lookup(ref), [*stack, ref], request)
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if siblings and self.dialect == "3.1":
            # 3.1 allows keywords beside $ref (description, default): they refine the target.
            target = {**target, **self._convert(siblings, stack, request)}
        return target

    def _convert_keyword(self, out: dict, key: str, value, stack: list[str], request: bool):
        """Sets out[key] (or what JSON Schema 2020-12 calls it) from one keyword of the node."""
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out["$defs" if key == "definitions" else key] = {
                name: self._convert(sub, stack, request) for name, sub in value.items()
            }
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [self._convert(sub, stack, request) for sub in value]
        elif key == "items" and isinstance(value, list):
            # The draft-4 tuple form, as Swagger 2.0 may write it.
            out["prefixItems"] = [self._convert(sub, stack, request) for sub in value]
        elif key == "items" or (key in _SUBSCHEMAS and isinstance(value, dict | bool)):
            out[key] = self._convert(value, stack, request)
        else:
            out[key] = copy.deepcopy(value)

    def _drop_read_only(self, node: dict, out: dict) -> None:
        """A request body leaves out the properties the API marks readOnly."""
        if not isinstance(out.get("properties"), dict):
            return
        read_only = [
            name
            for name, sub in node.get("properties", {}).items()
            if isinstance(sub, dict) and self._resolved_flag(sub, "readOnly")
        ]
        for name in read_only:
            out["properties"].pop(name, None)
        if read_only and isinstance(out.get("required"), list):
            out["required"] = [r for r in out["required"] if r not in read_only]
            if not out["required"]:
                del out["required"]

    def _resolved_flag(self, node: dict, flag: str) -> bool:
        try:
            return bool(self.resolve(node).get(flag))
        except RefError:
            return False

    def _dialect_fixes(self, node: dict, out: dict) -> None:
        if self.dialect in ("2.0", "3.0"):
            if node.get("nullable") is True or node.get("x-nullable") is True:
                _allow_null(out)
            for bound, flag in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
                if out.get(flag) is True and bound in out:
                    out[flag] = out.pop(bound)
                elif out.get(flag) is False:
                    del out[flag]
        if out.get("type") == "file":  # Swagger 2.0 uploads
            out["type"] = "string"
            out["format"] = "binary"
        if "example" in node and "examples" not in out:
            out["examples"] = [copy.deepcopy(node["example"])]
        elif isinstance(out.get("examples"), dict):  # OpenAPI Example Objects, not JSON Schema's
            out["examples"] = [
                ex.get("value") for ex in out["examples"].values() if isinstance(ex, dict)
            ]


def _allow_null(schema: dict) -> None:
    kind = schema.get("type")
    if isinstance(kind, str):
        schema["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        schema["type"] = [*kind, "null"]
    elif "enum" in schema and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]


def schema_problems(schema: dict) -> list[str]:
    return [
        f"inputSchema at {where.lstrip('.').replace('.', '/') or '(root)'}: {message}"
        for where, message in tenant_schema_problems(schema)
    ]
