"""Reading the JSON and YAML documents tenants send (definitions, imported OpenAPI/Postman
documents, dashboard fields, CLI files): the one place where such text becomes data.

What it refuses, so nothing built from a document can grow without bound:
- YAML aliases (`*name`) that expand too far. An alias lets a few hundred bytes stand for
  billions of nodes once something walks the data (the "billion laughs"). Aliases themselves
  are allowed (YAML dumpers write them for repeated values), but the document's size with every
  alias expanded is computed on the node graph before anything is built, and a document that
  would expand past MAX_EXPANDED_NODES (or ten times its own size) is refused, as is an alias
  that contains itself.
- Nesting deeper than MAX_DOCUMENT_DEPTH, and documents larger than the caller's limit.
- Duplicate keys, where the caller asks (the later value would silently win).
- YAML-only types: timestamps stay strings, as they would be in JSON.

libyaml's C parser turns the text into events (fast, and without recursion), but its C composer
is never used: it recurses without a limit and crashes the process on deeply nested flow
collections (`[[[[...`). Nodes are composed by PyYAML's Python composer, which here counts how
deep it is and stops past MAX_DOCUMENT_DEPTH, before libyaml's own nesting limit (in the wheels
since PyYAML 6.0.4, with a message of its own) or Python's recursion limit is reached.
"""

import json
import time
from collections.abc import Hashable

import orjson
import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.resolver import Resolver

from mcp_protocol.limits import depth_exceeds

MAX_DOCUMENT_DEPTH = 128
_TOO_DEEP = f"nested deeper than {MAX_DOCUMENT_DEPTH} levels"
# libyaml's own limit (1,000 levels, in PyYAML's wheels since 6.0.4), as its errors word it.
LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"
MAX_EXPANDED_NODES = 2_000_000
# Reading YAML is pure Python past libyaml's events: a large document holds its thread (and,
# under ASGI, every sync view of the process) for seconds. Past this, reading stops.
YAML_DEADLINE_SECONDS = 10.0


class DocumentError(ValueError):
    """A document that cannot be read; `line`/`column` (1-based) when known."""

    def __init__(self, problem: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line
        self.column = column

    def where(self, label: str) -> str:
        if self.line is None:
            return label
        return f"{label}:{self.line}:{self.column}"


try:
    from yaml._yaml import CParser
except ImportError:  # PyYAML built without libyaml: the pure-Python loader does the same
    CParser = None


if CParser is not None:

    class _Base(Composer, CParser, SafeConstructor, Resolver):
        """libyaml's event parser under Python's composer (see the module docstring)."""

        def __init__(self, stream) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

else:
    _Base = yaml.SafeLoader


class _Loader(_Base):
    unique_keys = True
    deadline = None
    _composed = 0
    _depth = 0

    def compose_node(self, parent, index):
        self._composed += 1
        if self._composed % 1000 == 0 and time.monotonic() > self.deadline:
            raise DocumentError(f"took longer than {YAML_DEADLINE_SECONDS:g} s to read")
        # A node this deep sits in more than MAX_DOCUMENT_DEPTH collections (a scalar in the
        # deepest one allowed is one more): refused here, the same way _check_depth would.
        if self._depth > MAX_DOCUMENT_DEPTH:
            raise DocumentError(_TOO_DEEP)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_document(self, node):
        _check_expansion(node)
        return super().construct_document(node)

    def construct_mapping(self, node, deep: bool = False):
        self.flatten_mapping(node)
        mapping = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                raise ConstructorError(
                    None, None, "a mapping key must be a plain value", key_node.start_mark
                )
            if self.unique_keys and key in mapping:
                raise ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


# YAML as JSON sees it: `example: 2024-05-01` stays a string instead of becoming a date.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in Resolver.yaml_implicit_resolvers.items()
}


def _children(node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(root) -> None:
    """Refuse a node graph whose tree (aliases expanded) is too large, or that loops."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            visiting.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > MAX_EXPANDED_NODES:
                break
            continue
        if key in sizes:
            continue
        if key in visiting:
            raise ConstructorError(
                None, None, "an alias refers to a node that contains it", node.start_mark
            )
        visiting.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    expanded = max(sizes.values(), default=0)
    limit = min(MAX_EXPANDED_NODES, max(100_000, 10 * len(sizes)))
    if expanded > limit:
        raise ConstructorError(
            None,
            None,
            f"aliases expand the document to more than {limit:,} values",
            root.start_mark,
        )


class _LenientLoader(_Loader):
    unique_keys = False


def _check_depth(data):
    if depth_exceeds(data, MAX_DOCUMENT_DEPTH):
        raise DocumentError(_TOO_DEEP)
    return data


def load_yaml(text: str, *, unique_keys: bool = True):
    """YAML (or JSON, which is YAML) as plain JSON data."""
    loader = (_Loader if unique_keys else _LenientLoader)(text)
    loader.deadline = time.monotonic() + YAML_DEADLINE_SECONDS
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if problem == LIBYAML_TOO_DEEP:  # its scanner reads ahead: it may stop before we do
            raise DocumentError(
                _TOO_DEEP, *((mark.line + 1, mark.column + 1) if mark else ())
            ) from None
        if mark is None:
            raise DocumentError(f"invalid YAML: {problem}") from None
        raise DocumentError(f"invalid YAML: {problem}", mark.line + 1, mark.column + 1) from None
    except yaml.YAMLError as exc:
        raise DocumentError(f"invalid YAML: {exc}") from None
    except RecursionError:
        raise DocumentError(_TOO_DEEP) from None
    finally:
        loader.dispose()
    try:
        orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        raise DocumentError(
            "only JSON values are allowed (binary and set values are not)"
        ) from None
    return _check_depth(data)


class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def load_json(text: str | bytes, *, unique_keys: bool = True):
    """JSON as data; with `unique_keys`, a repeated key is an error instead of the last winning."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        data = json.loads(text, object_pairs_hook=_unique_pairs if unique_keys else None)
    except _DuplicateKey as exc:
        raise DocumentError(f"invalid JSON: duplicate key {exc.args[0]!r}") from None
    except json.JSONDecodeError as exc:
        raise DocumentError(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except UnicodeDecodeError:
        raise DocumentError("invalid JSON: not UTF-8 text") from None
    except RecursionError:
        raise DocumentError(_TOO_DEEP) from None
    return _check_depth(data)
