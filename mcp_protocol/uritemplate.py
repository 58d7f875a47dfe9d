"""RFC 6570 URI templates (levels 1-3, plus the level 4 modifiers for expansion): expand and match."""

import re
from functools import lru_cache
from urllib.parse import quote, unquote

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_VARSPEC = re.compile(r"^([A-Za-z0-9_.%]+)(\*|:\d{1,4})?$")
_UNRESERVED = "-._~"
_RESERVED = ":/?#[]@!$&'()*+,;="

# operator -> (first, separator, named, if-empty, allow reserved); RFC 6570 appendix A.
_OPERATORS = {
    "": ("", ",", False, "", False),
    "+": ("", ",", False, "", True),
    "#": ("#", ",", False, "", True),
    ".": (".", ".", False, "", False),
    "/": ("/", "/", False, "", False),
    ";": (";", ";", True, "", False),
    "?": ("?", "&", True, "=", False),
    "&": ("&", "&", True, "=", False),
}


class UriTemplateError(ValueError):
    pass


@lru_cache(maxsize=1024)
def _parse(template: str) -> tuple:
    """The template as literal strings and (operator, ((name, modifier), ...)) expressions."""
    parts: list = []
    position = 0
    for found in _EXPRESSION.finditer(template):
        if found.start() > position:
            parts.append(template[position : found.start()])
        body = found.group(1)
        operator = body[:1] if body[:1] in _OPERATORS and body[:1] != "" else ""
        specs = []
        for spec in body[len(operator) :].split(","):
            parsed = _VARSPEC.match(spec.strip())
            if not parsed:
                raise UriTemplateError(f"Invalid variable {spec!r} in URI template {template!r}")
            specs.append((parsed.group(1), parsed.group(2) or ""))
        parts.append((operator, tuple(specs)))
        position = found.end()
    rest = template[position:]
    if "{" in rest or "}" in rest:
        raise UriTemplateError(f"Unbalanced braces in URI template {template!r}")
    if rest:
        parts.append(rest)
    return tuple(parts)


def variables(template: str) -> list[str]:
    names: list[str] = []
    for part in _parse(template):
        if isinstance(part, tuple):
            names.extend(name for name, _ in part[1] if name not in names)
    return names


def _encode(value: str, allow_reserved: bool) -> str:
    return quote(value, safe=_UNRESERVED + (_RESERVED + "%" if allow_reserved else ""))


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _expand_expression(operator: str, specs, values: dict) -> str:
    first, separator, named, if_empty, reserved = _OPERATORS[operator]
    pieces = []
    for name, modifier in specs:
        value = values.get(name)
        if value is None or (isinstance(value, list | dict) and not value):
            continue
        if isinstance(value, dict):
            pairs = [(str(k), _scalar(v)) for k, v in value.items()]
            if modifier == "*":
                pieces.extend(f"{_encode(k, reserved)}={_encode(v, reserved)}" for k, v in pairs)
                continue
            text = ",".join(f"{_encode(k, reserved)},{_encode(v, reserved)}" for k, v in pairs)
        elif isinstance(value, list | tuple):
            items = [_encode(_scalar(item), reserved) for item in value]
            if modifier == "*":
                pieces.extend(f"{name}={item}" if named else item for item in items)
                continue
            text = ",".join(items)
        else:
            raw = _scalar(value)
            if modifier.startswith(":"):
                raw = raw[: int(modifier[1:])]
            text = _encode(raw, reserved)
        if named:
            pieces.append(f"{name}{if_empty if text == '' else '=' + text}")
        else:
            pieces.append(text)
    return first + separator.join(pieces) if pieces else ""


def expand(template: str, values: dict) -> str:
    out = []
    for part in _parse(template):
        if isinstance(part, str):
            out.append(part)
        else:
            out.append(_expand_expression(part[0], part[1], values))
    return "".join(out)


# What one value may contain in a URI that was expanded with each operator.
_VALUE_PATTERN = {
    "": "[^/?#,]*",
    "+": ".*?",
    "#": ".*?",
    ".": "[^/?#.]*",
    "/": "[^/?#]*",
}


@lru_cache(maxsize=1024)
def _matcher(template: str):
    """A regex for the template, and how to read each group back into variables."""
    regex = ["^"]
    readers = []  # one per group: ("value", name) or ("pairs", names)
    for part in _parse(template):
        if isinstance(part, str):
            regex.append(re.escape(part))
            continue
        operator, specs = part
        names = tuple(name for name, _ in specs)
        if operator in ("?", "&", ";"):
            # Named pairs may come in any order; read them back from the whole group.
            lead = re.escape(operator)
            body = "[^#]*" if operator != ";" else "[^/?#]*"
            regex.append(f"(?:{lead}({body}))?")
            readers.append(("pairs", operator, names))
            continue
        first, separator, *_ = _OPERATORS[operator]
        value = _VALUE_PATTERN[operator]
        if len(specs) == 1 and operator == "":
            value = "[^/?#]*"
        groups = []
        for index, _name in enumerate(names):
            lead = re.escape(first if index == 0 else separator)
            groups.append(f"(?:{lead}({value}))?" if operator else f"{lead}({value})")
            readers.append(("value", names[index]))
        if operator == "":
            # Later variables of a simple expression may be absent (undefined), with their comma.
            head, *tail = groups
            regex.append(head + "".join(f"(?:{g})?" for g in tail))
        else:
            regex.append("".join(groups))
    regex.append("$")
    return re.compile("".join(regex), re.DOTALL), tuple(readers)


def _read_pairs(text: str, separator: str, names) -> dict:
    found = {}
    for item in text.split(separator):
        if not item:
            continue
        key, _, value = item.partition("=")
        key = unquote(key)
        if key in names and key not in found:
            found[key] = unquote(value)
    return found


def match(template: str, uri: str) -> dict | None:
    """The variables that expand `template` into `uri`, or None when it cannot."""
    pattern, readers = _matcher(template)
    found = pattern.match(uri)
    if not found:
        return None
    result: dict[str, str] = {}
    for reader, group in zip(readers, found.groups(), strict=True):
        if group is None:
            continue
        if reader[0] == "value":
            result[reader[1]] = unquote(group)
        else:
            _, operator, names = reader
            separator = ";" if operator == ";" else "&"
            for key, value in _read_pairs(group, separator, names).items():
                result.setdefault(key, value)
    return result
