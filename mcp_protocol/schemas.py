"""JSON Schema 2020-12 validators for schemas users write: never fetch a `$ref` from the network,
match every regular expression in linear time, and stop a validation that runs too long.

Tenant schemas run on the shared event loop, so three things are bounded:
- regular expressions (`pattern`, `patternProperties`, `format: regex`) run on RE2, which has no
  backtracking; a pattern RE2 cannot run (lookaround, backreferences) is refused by
  `schema_problems` when the schema is saved;
- in-place `$ref` cycles (`{"$ref": "#"}`) that could only recurse forever are refused there too;
- every keyword checks a deadline, so an exponential schema (nested `anyOf` over `$ref`s) ends
  with one validation error instead of holding the loop.
"""

import contextvars
import functools
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import unquote

import orjson
import re2
from jsonschema import Draft202012Validator, FormatChecker, ValidationError, validators
from jsonschema.exceptions import SchemaError
from referencing import Registry
from referencing.exceptions import Unresolvable

from .limits import MAX_JSON_DEPTH, depth_exceeds

# An empty registry with no retrieve function: a `$ref` that is not inside the schema fails to
# resolve instead of being fetched (schemas come from tenants; fetching would be an SSRF hole).
_OFFLINE = Registry()
REF_KEYWORDS = ("$ref", "$dynamicRef")
VALIDATION_BUDGET_SECONDS = 0.03
MAX_ERRORS = 100
MAX_PATTERN_LENGTH = 1000

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.max_mem = 8 << 20  # RE2 refuses a pattern whose automaton would need more


class ValidationBudgetExceeded(Exception):
    pass


# The running validation's budget: [keywords since the last clock read, CPU deadline or None].
_DEADLINE: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "schema_validation_deadline", default=None
)
# Reading the thread's CPU clock costs microseconds (far more than a small validation), so it
# is read every CLOCK_EVERY keywords, and the first read starts the budget: a validation of
# fewer keywords (most tool calls) never reads it, and a long one overshoots by at most
# 2 x CLOCK_EVERY keywords (each itself bounded: RE2, depth, sizes).
CLOCK_EVERY = 8


@functools.lru_cache(maxsize=4096)
def linear_regex(pattern: str) -> Any:
    """The pattern compiled by RE2; raises ValueError when RE2 cannot run it."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise ValueError(f"longer than {MAX_PATTERN_LENGTH} characters")
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        raise ValueError(str(reason)) from None


def _search(pattern: str, text: str) -> bool:
    try:
        return linear_regex(pattern).search(text) is not None
    except ValueError:
        return False  # refused when saved; a stored one that slipped through matches nothing


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, pattern_properties: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: dict[str, Any], schema: dict[str, Any]) -> Iterator[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    for key in instance:
        if key not in properties and not any(_search(p, key) for p in patterns):
            yield key


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = set(_additional(instance, schema))
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            joined = ", ".join(repr(each) for each in sorted(extras, key=str))
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


_FORMATS = FormatChecker(
    [name for name in Draft202012Validator.FORMAT_CHECKER.checkers if name != "regex"]
)


@_FORMATS.checks("regex", raises=ValueError)
def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        linear_regex(instance)
    return True


_Keyword = Callable[[Any, Any, Any, Any], Iterable[ValidationError] | None]


def _budgeted(keyword: _Keyword) -> _Keyword:
    @functools.wraps(keyword)
    def checked(
        validator: Any, value: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        budget = _DEADLINE.get()
        if budget is not None:
            budget[0] += 1
            if budget[0] >= CLOCK_EVERY:
                budget[0] = 0
                now = time.thread_time()
                if budget[1] is None:
                    budget[1] = now + VALIDATION_BUDGET_SECONDS
                elif now > budget[1]:
                    raise ValidationBudgetExceeded
        result = keyword(validator, value, instance, schema)
        if result is not None:
            yield from result

    return checked


_KEYWORDS = dict(Draft202012Validator.VALIDATORS)
_KEYWORDS.update(
    pattern=_pattern,
    patternProperties=_pattern_properties,
    additionalProperties=_additional_properties,
)
_LinearValidator = validators.create(
    meta_schema=Draft202012Validator.META_SCHEMA,
    validators={name: _budgeted(keyword) for name, keyword in _KEYWORDS.items()},
    type_checker=Draft202012Validator.TYPE_CHECKER,
    format_checker=_FORMATS,
    id_of=Draft202012Validator.ID_OF,
    applicable_validators=Draft202012Validator._APPLICABLE_VALIDATORS,
)


class BoundedValidator:
    """A validator whose `iter_errors` answers within a time budget, for instances of bounded
    depth; going over either is reported as one validation error at the root."""

    __slots__ = ("schema", "_validator", "_flat")

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator = _LinearValidator(schema, registry=_OFFLINE, format_checker=_FORMATS)
        self._flat = flat_object_schema(schema)

    def iter_errors(self, instance: Any) -> list[ValidationError]:
        if self._flat is not None and self._flat.accepts(instance):
            return []
        if depth_exceeds(instance, MAX_JSON_DEPTH):
            return [ValidationError(f"nested deeper than {MAX_JSON_DEPTH} levels")]
        # The budget is CPU time of this thread, not wall time: a tenant's schema is stopped
        # for the work it makes, never because the process was waiting for a busy core.
        token = _DEADLINE.set([0, None])
        errors = []
        try:
            for error in self._validator.iter_errors(instance):
                errors.append(error)
                if len(errors) >= MAX_ERRORS:
                    break
        except ValidationBudgetExceeded:
            ms = int(VALIDATION_BUDGET_SECONDS * 1000)
            return [ValidationError(f"validation against the schema took longer than {ms} ms")]
        except RecursionError:
            return [ValidationError("the schema recurses without end")]
        except Unresolvable as exc:
            return [ValidationError(f"a $ref of the schema cannot be resolved ({exc})")]
        finally:
            _DEADLINE.reset(token)
        return errors

    def is_valid(self, instance: Any) -> bool:
        return not self.iter_errors(instance)


# The JSON types a flat schema's property may name, and the Python values that are surely of
# that type (exact types only: a float like 1.0, which 2020-12 counts as an integer, or any
# subclass is left to the full validator).
_FLAT_TYPES: dict[str | None, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    None: (str, int, float, bool, type(None)),  # no `type`: any scalar
}
_SCALARS = _FLAT_TYPES[None]
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment"})
_FLAT_OBJECT_KEYWORDS = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties"}


class FlatObjectSchema:
    """The most common tool input schema, an object of scalar properties (`type`, `properties`
    of scalar types, `required`, `additionalProperties: false`), checked without jsonschema.

    `accepts` only ever answers True for an instance the full validator finds valid: an object
    whose every value is a scalar (so no depth to check), that has every required property,
    whose declared properties have exactly the declared type, and with no undeclared property
    when they are forbidden. Anything else (False) goes to the full validator, which finds the
    errors and words them. Its work is bounded by the schema, as the validator's is."""

    __slots__ = ("properties", "required", "closed")

    def __init__(
        self, properties: dict[str, tuple[type, ...]], required: tuple[str, ...], closed: bool
    ) -> None:
        self.properties = properties
        self.required = required
        self.closed = closed

    def accepts(self, instance: Any) -> bool:
        if type(instance) is not dict:
            return False
        for name in self.required:
            if name not in instance:
                return False
        properties = self.properties
        for key, value in instance.items():
            kinds = properties.get(key)
            if kinds is None:
                if self.closed or type(value) not in _SCALARS:
                    return False
            elif type(value) not in kinds:
                return False
        return True


def flat_object_schema(schema: Any) -> FlatObjectSchema | None:
    """The schema as a FlatObjectSchema, or None when it uses anything beyond that shape."""
    if not isinstance(schema, dict) or not set(schema) <= _FLAT_OBJECT_KEYWORDS:
        return None
    if schema.get("type") != "object":
        return None
    additional = schema.get("additionalProperties", True)
    if additional is not False and "additionalProperties" in schema:
        return None  # `true` makes the validator walk every key: left to it, budget and all
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    if not all(isinstance(name, str) for name in required):
        return None
    kinds: dict[str, tuple[type, ...]] = {}
    for name, subschema in properties.items():
        if not isinstance(subschema, dict) or not set(subschema) <= _ANNOTATIONS | {"type"}:
            return None
        declared = subschema.get("type")
        if "type" in subschema and not isinstance(declared, str):
            return None  # a list of types, or a broken schema: the validator says what it means
        if declared not in _FLAT_TYPES:
            return None
        kinds[name] = _FLAT_TYPES[declared]
    return _shared_flat_schema(tuple(kinds.items()), tuple(required), additional is False)


@functools.lru_cache(maxsize=4096)
def _shared_flat_schema(
    kinds: tuple[tuple[str, tuple[type, ...]], ...], required: tuple[str, ...], closed: bool
) -> FlatObjectSchema:
    """One FlatObjectSchema per meaning (annotations aside), shared by every tool that has it: a
    warm call to one of many servers then finds its checker in the CPU's caches more often."""
    return FlatObjectSchema(dict(kinds), required, closed=closed)


def validator_for(schema: dict[str, Any]) -> BoundedValidator:
    return BoundedValidator(schema)


def external_refs(schema: Any, path: str = "") -> list[str]:
    """Paths of every `$ref`/`$dynamicRef` that points outside the schema itself."""
    found = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            here = f"{path}.{key}" if path else key
            if key in REF_KEYWORDS and isinstance(value, str) and not value.startswith("#"):
                found.append(here)
            else:
                found.extend(external_refs(value, here))
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            found.extend(external_refs(item, f"{path}[{i}]"))
    return found


# -- checks when a schema is saved -----------------------------------------------------------------

# Keywords that apply a subschema to the same instance (no step down into it): a cycle through
# only these recurses forever.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_MANY = ("allOf", "anyOf", "oneOf")


def _pointer(path: tuple[Any, ...]) -> str:
    return "#" + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _resolve(root: Any, ref: str) -> tuple[str | int, ...] | None:
    """The path of a local JSON-pointer `$ref`, or None when it is not one or does not resolve."""
    if ref == "#":
        return ()
    if not ref.startswith("#/"):
        return None
    node, path = root, []
    for raw in ref[2:].split("/"):
        part: str | int = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and str(part).isdigit() and int(part) < len(node):
            part = int(part)
            node = node[part]
        else:
            return None
        path.append(part)
    return tuple(path)


def _node(root: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        root = root[part]
    return root


def _in_place_children(root: Any, path: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    node = _node(root, path)
    if not isinstance(node, dict):
        return
    for key in _IN_PLACE_ONE:
        if isinstance(node.get(key), dict):
            yield (*path, key)
    for key in _IN_PLACE_MANY:
        if isinstance(node.get(key), list):
            yield from ((*path, key, i) for i in range(len(node[key])))
    if isinstance(node.get("dependentSchemas"), dict):
        yield from ((*path, "dependentSchemas", k) for k in node["dependentSchemas"])
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = _resolve(root, ref)
        if target is not None:
            yield target


def _walk(schema: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every (path, subschema) of a schema, without recursion."""
    stack = [(path, schema)]
    while stack:
        here, node = stack.pop()
        yield here, node
        if isinstance(node, dict):
            stack.extend(((*here, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend(((*here, i), v) for i, v in enumerate(node))


def _ref_cycle(schema: Any) -> str | None:
    """The pointer of a subschema that refers back to itself without consuming the instance."""
    state: dict[tuple[Any, ...], int] = {}  # 1: on the current path, 2: done
    for start, node in _walk(schema):
        if not isinstance(node, dict) or start in state:
            continue
        stack = [(start, iter(_in_place_children(schema, start)))]
        state[start] = 1
        while stack:
            path, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[path] = 2
                stack.pop()
            elif state.get(child) == 1:
                return _pointer(child)
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(_in_place_children(schema, child))))
    return None


# Maps from names to subschemas: their keys are names, not keywords.
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


# Meta-validation is most of the cost of compiling a server on its cold first call, and many
# servers share schemas (imported from the same API, copied between tools): each distinct schema
# is checked once per process, keyed by its canonical JSON (sorted keys).
_PROBLEMS_CACHE_SIZE = 4096
_problems_cache: "OrderedDict[bytes, tuple[tuple[str, str], ...]]" = OrderedDict()


def schema_problems(schema: Any) -> list[tuple[str, str]]:
    """(path, message) for each reason a tenant's schema is refused, checked without recursion
    before anything recursive looks at it."""
    if depth_exceeds(schema, MAX_JSON_DEPTH):
        return [("", f"nested deeper than {MAX_JSON_DEPTH} levels")]
    try:
        canonical = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # not plain JSON: checked every time
        return _schema_problems(schema)
    found = _problems_cache.get(canonical)
    if found is None:
        found = tuple(_schema_problems(schema))
        _problems_cache[canonical] = found
        if len(_problems_cache) > _PROBLEMS_CACHE_SIZE:
            _problems_cache.popitem(last=False)
    else:
        _problems_cache.move_to_end(canonical)
    return list(found)


def _schema_problems(schema: Any) -> list[tuple[str, str]]:
    if depth_exceeds(schema, MAX_JSON_DEPTH):
        return [("", f"nested deeper than {MAX_JSON_DEPTH} levels")]
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in exc.path)
        return [(where, exc.message)]
    problems = []
    nodes = [
        (path, node)
        for path, node in _walk(schema)
        if isinstance(node, dict) and not (path and path[-1] in _SCHEMA_MAPS)
    ]
    has_pattern_properties = any("patternProperties" in node for _, node in nodes)
    for path, node in nodes:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
        patterns = []
        if isinstance(node.get("pattern"), str):
            patterns.append((f"{where}.pattern", node["pattern"]))
        if isinstance(node.get("patternProperties"), dict):
            patterns.extend((f"{where}.patternProperties", p) for p in node["patternProperties"])
        for at, pattern in patterns:
            try:
                linear_regex(pattern)
            except ValueError as exc:
                problems.append(
                    (at, f"{pattern!r} is not a regular expression this platform runs ({exc})")
                )
        if "unevaluatedProperties" in node and has_pattern_properties:
            # jsonschema evaluates patternProperties for unevaluatedProperties with Python's
            # backtracking engine; the combination is refused rather than run that way.
            problems.append(
                (
                    f"{where}.unevaluatedProperties",
                    "cannot be combined with patternProperties in the same schema",
                )
            )
    cycle = _ref_cycle(schema)
    if cycle is not None:
        problems.append(("", f"{cycle} refers back to itself without validating anything"))
    return problems
