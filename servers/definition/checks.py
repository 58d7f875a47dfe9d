"""The checker validation reports problems through, and the checks several parts share: unique
names, templates, content blocks, completions."""

import base64
import binascii

from mcp_protocol.schemas import external_refs, schema_problems

from .fields import CONTENT_TYPES

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
    def __init__(self) -> None:
        self.errors: list[str] = []
        self.template_names = True

    def add(self, path: str, message: str) -> None:
        self.errors.append(f"{path}: {message}")

    def keys(self, path: str, item: dict, allowed, required=()) -> None:
        for key in item:
            if key not in allowed:
                self.add(f"{path}.{key}" if path else str(key), "unknown field")
        for key in required:
            if key not in item or item[key] is None or item[key] == "":
                self.add(f"{path}.{key}" if path else key, "required")

    def string(self, path, item, key, *, required: bool = False) -> bool:
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


def _templates(c: _Checker, path: str, value) -> None:
    from ..templating import TemplateCompileError, compile_value

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


def _completions(c: _Checker, path: str, completions, names: set) -> None:
    if not c.kind_of(path, completions, dict, "a mapping"):
        return
    for name, values in completions.items():
        p = f"{path}.{name}"
        if name not in names:
            c.add(p, "names no argument/variable of this item")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            c.add(p, "must be a list of strings")


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
