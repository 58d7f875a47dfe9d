"""SCIM PATCH (RFC 7644 §3.5.2) applied to a resource as a dict: the services then store the
result as they would a PUT's body. Both providers' shapes are understood:

- Okta: `{"op": "replace", "value": {"active": false}}` (no path, a partial resource);
- Entra ID: `{"op": "Replace", "path": "active", "value": "False"}` (op capitalized, booleans as
  strings; the services coerce them), `{"op": "Add", "path": "members", "value": [{...}]}`,
  `{"op": "Remove", "path": "members", "value": [{"value": "<id>"}]}`;
- value paths: `emails[type eq "work"].value`, `members[value eq "<id>"]`.
"""

import copy
from typing import Any

from .errors import ScimError
from .filters import FilterError, compile_filter, get_ci, split_path

PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
CANONICAL = {
    name.lower(): name
    for name in (
        "userName",
        "externalId",
        "displayName",
        "nickName",
        "title",
        "active",
        "name",
        "givenName",
        "familyName",
        "formatted",
        "middleName",
        "emails",
        "phoneNumbers",
        "members",
        "value",
        "type",
        "primary",
        "display",
        "locale",
        "timezone",
        "userType",
        "preferredLanguage",
    )
}


class PatchError(ValueError):
    """A PATCH the resource cannot take; `scim_type` is SCIM's error keyword."""

    def __init__(self, message: str, scim_type: str = "invalidSyntax") -> None:
        super().__init__(message)
        self.scim_type = scim_type


def _key(node: dict, name: str) -> str:
    lowered = name.lower()
    for key in node:
        if key.lower() == lowered:
            return key
    return CANONICAL.get(lowered, name)


def _parse_path(path: str) -> tuple[list[str], str | None, list[str]]:
    """'emails[type eq "work"].value' -> (['emails'], 'type eq "work"', ['value'])."""
    if "[" in path:
        head, _, rest = path.partition("[")
        inner, closing, tail = rest.rpartition("]")
        if not closing:
            raise PatchError(f"Malformed path {path!r}.", "invalidPath")
        return split_path(head), inner, [p for p in tail.lstrip(".").split(".") if p]
    return split_path(path), None, []


def _container(resource: dict, parts: list[str], create: bool) -> tuple[dict, str] | None:
    node = resource
    for part in parts[:-1]:
        key = _key(node, part)
        child = node.get(key)
        if not isinstance(child, dict):
            if not create:
                return None
            child = node[key] = {}
        node = child
    return node, _key(node, parts[-1])


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict) and "value" in a and "value" in b:
        return bool(a["value"] == b["value"])
    return bool(a == b)


def _merge(node: dict, key: str, value: Any, op: str) -> None:
    current = node.get(key)
    if op == "add" and isinstance(current, list):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not any(_same(item, existing) for existing in current):
                current.append(item)
    elif op == "add" and isinstance(current, dict) and isinstance(value, dict):
        for sub, sub_value in value.items():
            current[_key(current, sub)] = sub_value
    else:
        node[key] = value


def _apply_without_path(resource: dict, op: str, value: Any) -> None:
    if not isinstance(value, dict):
        raise PatchError("An operation without a path needs an object value.")
    for name, sub_value in value.items():
        if "." in name or "[" in name or name.lower().startswith("urn:"):
            # Okta and Entra sometimes send {"name.givenName": "x"} inside a path-less value.
            _apply_with_path(resource, op, name, sub_value)
        else:
            _merge(resource, _key(resource, name), sub_value, op)


def _element_from(inner: str) -> dict:
    """The element a filter like `type eq "work"` describes, for an add into no match."""
    element: dict[str, Any] = {}
    for clause in inner.split(" and "):
        attribute, _, rest = clause.strip().partition(" ")
        op, _, literal = rest.strip().partition(" ")
        if op.lower() == "eq" and literal.startswith('"') and literal.endswith('"'):
            element[_key({}, attribute)] = literal[1:-1]
    return element


def _apply_with_path(resource: dict, op: str, path: str, value: Any) -> None:
    parts, inner, sub = _parse_path(path)
    found = _container(resource, parts, create=op != "remove")
    if found is None:
        return  # removing what is not there
    node, key = found
    if inner is None:
        if op == "remove":
            if value is not None and isinstance(node.get(key), list):
                # Entra's member removal: {"path": "members", "value": [{"value": id}]}.
                doomed = value if isinstance(value, list) else [value]
                node[key] = [e for e in node[key] if not any(_same(e, d) for d in doomed)]
            else:
                node.pop(key, None)
            return
        _merge(node, key, value, op)
        return
    try:
        matches = compile_filter(inner)
    except FilterError as exc:
        raise PatchError(str(exc), "invalidPath") from None
    elements = node.get(key)
    if not isinstance(elements, list):
        elements = node[key] = [] if op != "remove" else []
    chosen = [e for e in elements if isinstance(e, dict) and matches(e)]
    if op == "remove":
        if sub:
            for element in chosen:
                element.pop(_key(element, sub[0]), None)
        else:
            node[key] = [e for e in elements if e not in chosen]
        return
    if not chosen:
        element = _element_from(inner)
        elements.append(element)
        chosen = [element]
    for element in chosen:
        if sub:
            element[_key(element, sub[0])] = value
        elif isinstance(value, dict):
            element.update(value)


def apply_patch(resource: dict, body: Any) -> dict:
    """The resource after the PatchOp `body`; raises PatchError."""
    if not isinstance(body, dict):
        raise PatchError("The body must be a PatchOp object.")
    schemas = get_ci(body, "schemas") or []
    if PATCH_SCHEMA not in schemas:
        raise PatchError(f"A PATCH body names the schema {PATCH_SCHEMA}.")
    operations = get_ci(body, "Operations")
    if not isinstance(operations, list) or not operations:
        raise PatchError("A PATCH body needs a non-empty Operations list.")
    result = copy.deepcopy(resource)
    for operation in operations:
        if not isinstance(operation, dict):
            raise PatchError("Each operation must be an object.")
        op = str(get_ci(operation, "op") or "").lower()
        if op not in ("add", "replace", "remove"):
            raise PatchError(f"Unknown PATCH op {op!r}.")
        path = get_ci(operation, "path")
        value = get_ci(operation, "value")
        if path:
            _apply_with_path(result, op, str(path), value)
        elif op == "remove":
            raise PatchError("A remove operation needs a path.", "noTarget")
        else:
            _apply_without_path(result, op, value)
    return result


def patched(resource: dict, body: Any) -> dict:
    """`apply_patch` for the services: a PATCH that does not apply is the client's 400."""
    try:
        return apply_patch(resource, body)
    except PatchError as exc:
        raise ScimError(400, str(exc), exc.scim_type) from None
