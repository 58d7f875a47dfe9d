"""SCIM filters (RFC 7644 §3.4.2.2) and attribute paths, evaluated on resources as dicts.

    matcher = compile_filter('userName eq "a@b.c" and not (active eq false)')
    matcher(resource) -> bool

Hand-written rather than a library: the well-known parser (scim2-filter-parser) transpiles to
SQL or to Django queries over one flat model, while our resources are JSON documents (a person's
attributes as the provider sent them) and the grammar is small: comparisons (eq ne co sw ew gt
ge lt le pr), `and`/`or`/`not`, parentheses, value paths (`emails[type eq "work"]`), and the
form `emails[type eq "work"].value eq "x"` that Entra ID's validator sends. Attribute names are
case-insensitive; string comparisons too (userName, emails and displayName are caseExact=false
in RFC 7643), except `id` and `externalId`, which are case-exact.
"""

import json
import re
from collections.abc import Callable
from typing import Any

CORE_URNS = (
    "urn:ietf:params:scim:schemas:core:2.0:user",
    "urn:ietf:params:scim:schemas:core:2.0:group",
)
CASE_EXACT = {"id", "externalid"}
OPERATORS = {"eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"}

Matcher = Callable[[Any], bool]


class FilterError(ValueError):
    """A filter that does not parse (SCIM's `invalidFilter`)."""


_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<punct>[()\[\]])|(?P<word>[^\s()\[\]"]+))'
)


def _tokens(text: str) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    at = 0
    text = text.strip()
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise FilterError(f"Unexpected text in filter at {at}: {text[at : at + 20]!r}")
        at = match.end()
        if match.group("str") is not None:
            try:
                found.append(("value", json.loads(match.group("str"))))
            except ValueError:
                raise FilterError("A quoted string in the filter is malformed.") from None
        elif match.group("punct") is not None:
            found.append((match.group("punct"), match.group("punct")))
        else:
            found.append(("word", match.group("word")))
    return found


def split_path(path: str) -> list[str]:
    """'urn:...:User:name.givenName' -> ['name', 'givenName']; an extension's attribute keeps
    its schema URN as the first part."""
    lowered = path.lower()
    for urn in CORE_URNS:
        if lowered.startswith(urn + ":"):
            return path[len(urn) + 1 :].split(".")
    if lowered.startswith("urn:"):
        urn, _, attribute = path.rpartition(":")
        return [urn, *attribute.split(".")]
    return path.split(".")


def get_ci(node: Any, name: str) -> Any:
    """A dict's value for `name`, compared case-insensitively (None when absent)."""
    if not isinstance(node, dict):
        return None
    if name in node:
        return node[name]
    lowered = name.lower()
    for key, value in node.items():
        if key.lower() == lowered:
            return value
    return None


def values_at(resource: Any, parts: list[str]) -> list[Any]:
    """Every value at the path, flattening multi-valued attributes on the way."""
    current = [resource]
    for part in parts:
        following = []
        for node in current:
            value = get_ci(node, part)
            if isinstance(value, list):
                following.extend(value)
            elif value is not None:
                following.append(value)
        current = following
    # A comparison against a multi-valued complex attribute compares its "value" sub-attribute.
    return [get_ci(v, "value") if isinstance(v, dict) else v for v in current]


def _compare(op: str, actual: Any, expected: Any, exact: bool) -> bool:
    if isinstance(actual, str) and isinstance(expected, str) and not exact:
        actual, expected = actual.lower(), expected.lower()
    if isinstance(expected, bool) and isinstance(actual, str):
        actual = actual.lower() == "true"
    try:
        if op == "eq":
            return bool(actual == expected)
        if op == "ne":
            return bool(actual != expected)
        if op in ("co", "sw", "ew"):
            if not (isinstance(actual, str) and isinstance(expected, str)):
                return False
            return {"co": expected in actual, "sw": actual.startswith(expected)}.get(
                op, actual.endswith(expected)
            )
        return bool(
            {"gt": actual > expected, "ge": actual >= expected, "lt": actual < expected}.get(
                op, actual <= expected
            )
        )
    except TypeError:
        return False


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def peek_word(self) -> str:
        token = self.peek()
        return token[1].lower() if token and token[0] == "word" else ""

    def take(self, kind: str) -> Any:
        token = self.peek()
        if token is None or token[0] != kind:
            raise FilterError(f"Expected {kind} in the filter.")
        self.at += 1
        return token[1]

    def parse(self) -> Matcher:
        if not self.tokens:
            raise FilterError("The filter is empty.")
        matcher = self.any_of()
        if self.peek() is not None:
            raise FilterError("Unexpected text after the filter.")
        return matcher

    def any_of(self) -> Matcher:
        parts = [self.all_of()]
        while self.peek_word() == "or":
            self.at += 1
            parts.append(self.all_of())
        return parts[0] if len(parts) == 1 else (lambda r: any(p(r) for p in parts))

    def all_of(self) -> Matcher:
        parts = [self.one()]
        while self.peek_word() == "and":
            self.at += 1
            parts.append(self.one())
        return parts[0] if len(parts) == 1 else (lambda r: all(p(r) for p in parts))

    def one(self) -> Matcher:
        if self.peek_word() == "not":
            self.at += 1
            self.take("(")
            inner = self.any_of()
            self.take(")")
            return lambda r: not inner(r)
        token = self.peek()
        if token is not None and token[0] == "(":
            self.at += 1
            inner = self.any_of()
            self.take(")")
            return inner
        return self.comparison()

    def comparison(self) -> Matcher:
        parts = split_path(self.take("word"))
        token = self.peek()
        if token is not None and token[0] == "[":
            # A value path: the elements of a multi-valued attribute that match the inner filter.
            self.at += 1
            inner = self.any_of()
            self.take("]")
            sub: list[str] = []
            following = self.peek()
            if following is not None and following[0] == "word" and following[1].startswith("."):
                self.at += 1
                sub = following[1][1:].split(".")
            if not sub and self.peek_word() not in OPERATORS | {"pr"}:
                return lambda r: any(inner(e) for e in _elements(r, parts))
            return self._test(
                lambda r: [
                    v
                    for e in _elements(r, parts)
                    if inner(e)
                    for v in values_at(e, sub or ["value"])
                ],
                (sub or parts)[-1],
            )
        return self._test(lambda r: values_at(r, parts), parts[-1])

    def _test(self, values: Callable[[Any], list[Any]], name: str) -> Matcher:
        op = self.take("word").lower()
        if op == "pr":
            return lambda r: any(v not in (None, "", [], {}) for v in values(r))
        if op not in OPERATORS:
            raise FilterError(f"Unknown comparison operator {op!r}.")
        token = self.peek()
        if token is None:
            raise FilterError("A comparison needs a value.")
        self.at += 1
        expected: Any = token[1]
        if token[0] == "word":
            literal = {"true": True, "false": False, "null": None}
            if token[1].lower() in literal:
                expected = literal[token[1].lower()]
            else:
                try:
                    expected = json.loads(token[1])
                except ValueError:
                    raise FilterError(f"Unquoted value {token[1]!r} in the filter.") from None
        elif token[0] != "value":
            raise FilterError("A comparison needs a value.")
        exact = name.lower() in CASE_EXACT
        if expected is None:  # `attr eq null`: not present
            return lambda r: (op == "eq") == (not values(r))
        return lambda r: any(_compare(op, v, expected, exact) for v in values(r))


def _elements(resource: Any, parts: list[str]) -> list[Any]:
    current = [resource]
    for part in parts:
        following = []
        for node in current:
            value = get_ci(node, part)
            following.extend(value if isinstance(value, list) else [value] if value else [])
        current = following
    return current


def compile_filter(text: str) -> Matcher:
    return _Parser(text).parse()


def equality(text: str) -> tuple[str, Any] | None:
    """('username', 'a@b.c') when the filter is one top-level `attr eq "value"`: the lookups
    providers make before every create, answered with one indexed query instead of a scan."""
    try:
        tokens = _tokens(text)
    except FilterError:
        return None
    if len(tokens) != 3 or tokens[0][0] != "word" or tokens[2][0] != "value":
        return None
    if tokens[1] != ("word", tokens[1][1]) or tokens[1][1].lower() != "eq":
        return None
    parts = split_path(tokens[0][1])
    if len(parts) != 1:
        return None
    return parts[0].lower(), tokens[2][1]
