"""The limits on what one render of a tenant's template may cost: loop iterations, time, the size
of the strings, lists and numbers it builds, and the size of its output.

Templates run inline on the event loop that serves every tenant, so each render gets a budget:
every loop step, call, filter, intercepted operator and concatenation checks it, and a breach
raises `TemplateLimitError` (a ToolError: a clean error for that one call). Sizes are checked
*before* an operation that could allocate (`'x' * n`, `2 ** n`, `s.ljust(n)`, `'%9999999d' % 1`)
so a single step never allocates past the limit.
"""

import contextvars
import functools
import re
import string
import time
from dataclasses import dataclass, field
from typing import Literal

from jinja2 import nodes
from jinja2.compiler import CodeGenerator
from jinja2.sandbox import ImmutableSandboxedEnvironment

from mcp_protocol.errors import ToolError

# Loop steps over one render (all loops together, nested or not).
MAX_LOOP_ITERATIONS = 100_000
# Wall-clock time of one render. Far above what a real template needs (microseconds), and low
# enough that another tenant's request waiting behind it stays well under 100 ms.
TIME_BUDGET_SECONDS = 0.04
# Strings a template builds (`~`, `*`, filters, methods): one such step copies at most this much,
# a few milliseconds, so the time budget is checked often enough.
MAX_STRING_CHARS = 4 * 1024 * 1024
# What a render outputs: just above the largest response an http tool may read (20 MiB), so
# `{{ body }}` of such a response still renders.
MAX_OUTPUT_CHARS = 21 * 1024 * 1024
MAX_LIST_ITEMS = 1_000_000
# Integers: 4096 bits (about 1,233 digits); JSON numbers themselves stop at 64 bits.
MAX_INT_BITS = 4096


class TemplateLimitError(ToolError):
    """A render that went over one of its limits."""


@dataclass
class Budget:
    # Set by the first tick(): reading the thread's CPU clock costs microseconds, more than a
    # plain render ("{{ text }}", which never ticks), and nothing runs before the first tick
    # but output of plain values.
    deadline: float | None = None
    iterations: int = 0
    output: int = 0
    extra: dict = field(default_factory=dict)


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "template_budget", default=None
)


class budget:  # noqa: N801 - used as `with budget():`
    """One render's budget; nested renders (a macro calling into another template) share it."""

    def __enter__(self):
        self._token = None
        if _BUDGET.get() is None:
            # CPU time of this thread, not wall time: a render is stopped for the work it makes,
            # never because the process was waiting for a busy core.
            self._token = _BUDGET.set(Budget())
        return _BUDGET.get()

    def __exit__(self, *exc: object) -> Literal[False]:
        if self._token is not None:
            _BUDGET.reset(self._token)
        return False


def tick() -> None:
    current = _BUDGET.get()
    if current is None:
        return
    if current.deadline is None:
        current.deadline = time.thread_time() + TIME_BUDGET_SECONDS
    elif time.thread_time() > current.deadline:
        raise TemplateLimitError(
            f"Template stopped: it ran longer than {int(TIME_BUDGET_SECONDS * 1000)} ms"
        )


def count_output(text: str) -> None:
    current = _BUDGET.get()
    if current is None:
        return
    current.output += len(text)
    if current.output > MAX_OUTPUT_CHARS:
        raise TemplateLimitError(f"Template output is larger than {MAX_OUTPUT_CHARS:,} characters")


def _too_big(what: str, limit: int) -> TemplateLimitError:
    return TemplateLimitError(f"Template would build {what} larger than {limit:,}")


def check_size(value):
    """`value` back, if it is within the size limits."""
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARS:
            raise _too_big("a string", MAX_STRING_CHARS)
    elif isinstance(value, list | tuple | dict | set):
        if len(value) > MAX_LIST_ITEMS:
            raise _too_big("a collection", MAX_LIST_ITEMS)
    elif (
        isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS
    ):
        raise TemplateLimitError(f"Template would build a number over {MAX_INT_BITS} bits")
    return value


def check_weight(value) -> None:
    """Refuse a value whose text (str(), JSON, a join) would exceed the string limit: a list may
    hold the same 20 MB string a hundred times while itself being short."""
    if not isinstance(value, list | tuple | dict | set):
        return
    total, seen = 0, 0
    stack = [value]
    while stack:
        item = stack.pop()
        seen += 1
        if seen % 4096 == 0:
            tick()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set):
            total += 2
            stack.extend(item)
        else:
            total += 8
        if total > MAX_OUTPUT_CHARS:
            raise _too_big("text", MAX_OUTPUT_CHARS)


def _length(value) -> int:
    return len(value) if isinstance(value, str | list | tuple) else 0


def _check_int_argument(value) -> None:
    # Widths, counts and paddings: anything past the string limit could only build too much.
    if isinstance(value, int) and not isinstance(value, bool) and value > MAX_STRING_CHARS:
        raise _too_big("a string", MAX_STRING_CHARS)


_NUMBER = re.compile(r"\d+")


def _check_format_spec(spec: str) -> None:
    for digits in _NUMBER.findall(spec):
        if len(digits) > 9 or int(digits) > MAX_STRING_CHARS:
            raise _too_big("a string", MAX_STRING_CHARS)


def _check_brace_format(text: str) -> None:
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return  # format() itself reports the broken format string
    for _literal, _name, spec, _conversion in fields:
        if spec:
            _check_format_spec(spec)


_PRINTF_FIELD = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\d*|\*)(?:\.(\d*|\*))?")


def _check_printf(text: str, arguments) -> None:
    for found in _PRINTF_FIELD.finditer(text):
        for group in found.groups():
            if group and group != "*":
                _check_format_spec(group)
    items = arguments if isinstance(arguments, tuple) else (arguments,)
    for item in items:
        _check_int_argument(item)


def _power(left, right):
    if isinstance(left, int) and isinstance(right, int) and right > 0:
        bits = max(left.bit_length(), 1) * right
        if abs(left) > 1 and bits > MAX_INT_BITS:
            raise TemplateLimitError(f"Template would build a number over {MAX_INT_BITS} bits")
    return left**right


def _multiply(left, right):
    for sequence, count in ((left, right), (right, left)):
        if isinstance(sequence, str | list | tuple) and isinstance(count, int):
            if isinstance(sequence, str) and len(sequence) * count > MAX_STRING_CHARS:
                raise _too_big("a string", MAX_STRING_CHARS)
            if not isinstance(sequence, str) and len(sequence) * count > MAX_LIST_ITEMS:
                raise _too_big("a collection", MAX_LIST_ITEMS)
    if (
        isinstance(left, int)
        and isinstance(right, int)
        and left.bit_length() + right.bit_length() > MAX_INT_BITS + 1
    ):
        raise TemplateLimitError(f"Template would build a number over {MAX_INT_BITS} bits")
    return left * right


def _add(left, right):
    if _length(left) + _length(right) > MAX_STRING_CHARS:
        raise _too_big("a value", MAX_STRING_CHARS)
    return check_size(left + right)


def _modulo(left, right):
    if isinstance(left, str):
        _check_printf(left, right)
        check_weight(right)
    return left % right


_CHECKED_BINOPS = {"**": _power, "*": _multiply, "+": _add, "%": _modulo}

# Filters whose numeric arguments size what they build (a width, a count of slices).
_SIZING_FILTERS = {"center", "indent", "wordwrap", "slice", "batch", "truncate", "format"}
# Filters that turn their input into text.
_TEXT_FILTERS = {"join", "string", "tojson", "pprint", "format", "urlencode", "xmlattr", "safe"}
# Filters that turn a string into a list of its characters.
_LISTING_FILTERS = {"list", "batch", "slice", "map", "select", "reject", "unique", "sort"}


def checked_filter(name: str, func):
    @functools.wraps(func)
    def checked(*args, **kwargs):
        tick()
        if name in _SIZING_FILTERS:
            for value in (*args, *kwargs.values()):
                _check_int_argument(value)
        if name in _TEXT_FILTERS:
            for value in (*args, *kwargs.values()):
                check_weight(value)
        listed = args[0] if name in _LISTING_FILTERS and args else None
        if isinstance(listed, str) and len(listed) > MAX_LIST_ITEMS:
            raise _too_big("a collection", MAX_LIST_ITEMS)
        if name == "format":
            texts = [a for a in args if isinstance(a, str)]
            if texts:
                _check_printf(texts[0], tuple(args[args.index(texts[0]) + 1 :]))
        return check_size(func(*args, **kwargs))

    return checked


def _check_call(obj, args, kwargs) -> None:
    owner = getattr(obj, "__self__", None)
    wrapped = getattr(obj, "__wrapped__", None)
    if wrapped is not None:  # the sandbox's str.format wrapper
        owner = getattr(wrapped, "__self__", owner)
    if not isinstance(owner, str):
        return
    for value in (*args, *kwargs.values()):
        _check_int_argument(value)
    name = getattr(obj, "__name__", "")
    if name in ("format", "format_map", "join"):
        for value in (*args, *kwargs.values()):
            check_weight(value)
    check = _STR_METHOD_CHECKS.get(name)
    if check is not None:
        check(owner, args, kwargs)


# What each str method called on `owner` would make, checked before it is made.


def _check_join(owner: str, args, kwargs) -> None:
    joined = args[0] if args and isinstance(args[0], list | tuple) else ()
    if len(owner) * len(joined) > MAX_STRING_CHARS:
        raise _too_big("a string", MAX_STRING_CHARS)


def _check_format(owner: str, args, kwargs) -> None:
    _check_brace_format(owner)


def _check_split(owner: str, args, kwargs) -> None:
    separator = args[0] if args and isinstance(args[0], str) else None
    pieces = owner.count(separator) + 1 if separator else len(owner) // 2 + 1
    if pieces > MAX_LIST_ITEMS:
        raise _too_big("a collection", MAX_LIST_ITEMS)


def _check_replace(owner: str, args, kwargs) -> None:
    if len(args) < 2:
        return
    old, new = args[0], args[1]
    if isinstance(old, str) and isinstance(new, str):
        grows = owner.count(old) if old else len(owner) + 1
        if len(owner) + grows * max(len(new) - len(old), 0) > MAX_STRING_CHARS:
            raise _too_big("a string", MAX_STRING_CHARS)


def _check_expandtabs(owner: str, args, kwargs) -> None:
    size = args[0] if args else kwargs.get("tabsize", 8)
    if isinstance(size, int) and owner.count("\t") * size > MAX_STRING_CHARS:
        raise _too_big("a string", MAX_STRING_CHARS)


_STR_METHOD_CHECKS = {
    "join": _check_join,
    "format": _check_format,
    "format_map": _check_format,
    "split": _check_split,
    "rsplit": _check_split,
    "splitlines": _check_split,
    "replace": _check_replace,
    "expandtabs": _check_expandtabs,
}


def _counted(iterable):
    current = _BUDGET.get()
    for item in iterable:
        if current is not None:
            current.iterations += 1
            if current.iterations > MAX_LOOP_ITERATIONS:
                raise TemplateLimitError(
                    f"Template stopped: more than {MAX_LOOP_ITERATIONS:,} loop iterations"
                )
            if current.iterations % 64 == 0:
                tick()
        yield item


def _str_join(parts) -> str:
    parts = tuple(parts)
    for part in parts:
        check_weight(part)
    pieces = [str(part) for part in parts]
    if sum(len(piece) for piece in pieces) > MAX_STRING_CHARS:
        raise _too_big("a string", MAX_STRING_CHARS)
    return "".join(pieces)


def _finalize(value):
    # What `{{ value }}` prints: a container's text is checked before str() builds it.
    check_weight(value)
    return value


class _BudgetedCodeGenerator(CodeGenerator):
    """Routes every loop through the budget, and `~` through a size check."""

    def visit_For(self, node, frame) -> None:  # noqa: N802 - jinja's visitor naming
        if not getattr(node, "_budgeted", False):
            node.iter = nodes.Call(
                nodes.EnvironmentAttribute("budgeted_iter"), [node.iter], [], None, None
            )
            node._budgeted = True
        super().visit_For(node, frame)

    def visit_Concat(self, node, frame) -> None:  # noqa: N802
        self.write("environment.budgeted_join((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class BudgetedSandbox(ImmutableSandboxedEnvironment):
    """Jinja's sandbox (no private attributes, no mutation of lists and dicts) with a budget."""

    code_generator_class = _BudgetedCodeGenerator
    intercepted_binops = frozenset(_CHECKED_BINOPS)

    def __init__(self, **options) -> None:
        options.setdefault("finalize", _finalize)
        super().__init__(**options)
        self.filters = {name: checked_filter(name, func) for name, func in self.filters.items()}

    @staticmethod
    def budgeted_iter(iterable):
        return _counted(iterable)

    @staticmethod
    def budgeted_join(parts):
        return _str_join(parts)

    def call_binop(self, context, operator, left, right):
        tick()
        return _CHECKED_BINOPS[operator](left, right)

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 - jinja's signature
        tick()
        if __obj is __self.budgeted_iter:
            return _counted(*args)
        _check_call(__obj, args, kwargs)
        return check_size(super().call(__context, __obj, *args, **kwargs))
