"""RFC 6570 URI templates (levels 1-3, plus the level 4 modifiers for expansion): expand and match."""

import re
from functools import lru_cache
from typing import Any
from urllib.parse import quote, unquote

import re2

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
def _parse(template: str) -> tuple[Any, ...]:
    """The template as literal strings and (operator, ((name, modifier), ...)) expressions."""
    parts: list[Any] = []
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


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _expand_expression(
    operator: str, specs: tuple[tuple[str, str], ...], values: dict[str, Any]
) -> str:
    first, separator, named, if_empty, reserved = _OPERATORS[operator]
    pieces: list[str] = []
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


def expand(template: str, values: dict[str, Any]) -> str:
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
# Characters a value of each operator may contain (None: any), to tell whether the next
# expression's first character could also be read as part of this one's value.
_VALUE_EXCLUDES = {
    "": "/?#,",
    "+": None,
    "#": None,
    ".": "/?#.",
    "/": "/?#",
    "?": "#",
    "&": "#",
    ";": "/?#",
}
MAX_TEMPLATE_LENGTH = 1000

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.dot_nl = True
_RE2_OPTIONS.log_errors = False


def ambiguity(template: str) -> str | None:
    """Why matching URIs against `template` has no single answer, or None.

    Two expressions with nothing between them can split a URI between their values in more than
    one way (`{+a}{+b}`), unless the second one starts with a character the first one's values
    never contain (`{a}{/b}`, `{a}{?q}`); the same holds for the variables inside one expression
    whose values may contain its separator (`{+a,b}`)."""
    if len(template) > MAX_TEMPLATE_LENGTH:
        return f"longer than {MAX_TEMPLATE_LENGTH} characters"
    parts = _parse(template)
    previous = None
    for part in parts:
        if isinstance(part, str):
            previous = None
            continue
        operator, specs = part
        first, separator, *_ = _OPERATORS[operator]
        excludes = _VALUE_EXCLUDES[operator]
        splits = excludes is None or separator not in excludes
        if len(specs) > 1 and operator not in ("?", "&", ";") and splits:
            names = ",".join(name for name, _ in specs)
            return (
                f"{{{operator}{names}}}: values may contain the separator {separator!r}, "
                "so a URI could be split between them in more than one way"
            )
        if previous is not None:
            prev_expression, prev_excludes = previous
            expression = f"{{{operator}{','.join(name for name, _ in specs)}}}"
            if not first or prev_excludes is None or first not in prev_excludes:
                return (
                    f"{expression} right after {prev_expression}: "
                    "a URI could be split between them in more than one way; put a literal "
                    "character between them"
                )
        previous = (f"{{{operator}{','.join(name for name, _ in specs)}}}", excludes)
    return None


@lru_cache(maxsize=1024)
def _matcher(template: str) -> tuple[Any, tuple[tuple[Any, ...], ...]]:
    """A linear-time (RE2) regex for the template, and how to read each group into variables."""
    regex = ["^"]
    readers: list[tuple[Any, ...]] = []  # one per group: ("value", name) or ("pairs", names)
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
    # RE2 has no backtracking: a match costs time linear in the URI, whatever the template.
    return re2.compile("".join(regex), _RE2_OPTIONS), tuple(readers)


def _read_pairs(text: str, separator: str, names: tuple[str, ...]) -> dict[str, Any]:
    found = {}
    for item in text.split(separator):
        if not item:
            continue
        key, _, value = item.partition("=")
        key = unquote(key)
        if key in names and key not in found:
            found[key] = unquote(value)
    return found


def match(template: str, uri: str) -> dict[str, Any] | None:
    """The variables that expand `template` into `uri`, or None when it cannot."""
    pattern, readers = _matcher(template)
    found = pattern.search(uri)
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
