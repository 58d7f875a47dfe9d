"""The jinja2 sandbox every user-written template goes through.

`compile_value` turns any JSON value into a renderer; strings are parsed once, at compile time,
so a request only pays for rendering.
"""

import base64
import binascii
import functools
import re
from collections.abc import Callable
from typing import Any

import orjson
from jinja2 import ChainableUndefined, TemplateError, TemplateSyntaxError, Undefined, nodes

from mcp_protocol.errors import ToolError

from . import shapes, template_limits
from .template_limits import BudgetedSandbox, TemplateLimitError

# A string that is one expression and nothing else keeps the expression's native type.
_SINGLE_EXPRESSION = re.compile(r"^\{\{(?P<expr>(?:(?!\{\{|\}\}).)*)\}\}$", re.DOTALL)


class TemplateCompileError(ValueError):
    """A template that does not parse; raised when a definition is compiled, never per request."""


def _b64encode(value) -> str:
    raw = value if isinstance(value, bytes) else str(value).encode()
    return base64.b64encode(raw).decode("ascii")


def _b64decode(value) -> str:
    try:
        return base64.b64decode(str(value), validate=True).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"b64decode: not base64 ({exc})") from exc


def _environment() -> BudgetedSandbox:
    # ChainableUndefined: a missing variable (or an attribute of one) renders as "".
    env = BudgetedSandbox(undefined=ChainableUndefined, autoescape=False)
    env.filters["b64encode"] = template_limits.checked_filter("b64encode", _b64encode)
    env.filters["b64decode"] = template_limits.checked_filter("b64decode", _b64decode)
    # lipsum(n) builds n paragraphs in one call: nothing a tool needs.
    env.globals.pop("lipsum", None)
    return env


ENV = _environment()


def is_template(text: str) -> bool:
    return "{{" in text or "{%" in text


def _short(text: str) -> str:
    return text if len(text) <= 120 else text[:117] + "..."


def _plain(value):
    """A native expression result as plain JSON data, ready for orjson."""
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**64:
            raise ToolError(f"Template result {_short(str(value))} is too large for a JSON number")
        return value
    if isinstance(value, Undefined):
        return ""
    if isinstance(value, str):
        # tojson and friends return Markup, a str subclass.
        return str(value)
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | range):
        return [_plain(item) for item in value]
    return str(value)


@functools.lru_cache(maxsize=4096)
def _compile_string(text: str) -> Callable[[dict], Any]:
    single = _SINGLE_EXPRESSION.match(text)
    try:
        if single:
            expression = ENV.compile_expression(single.group("expr"), undefined_to_none=False)
        else:
            template = ENV.from_string(text)
    except TemplateSyntaxError as exc:
        raise TemplateCompileError(
            f"Template syntax error in {_short(text)!r}: {exc.message}"
        ) from exc

    bare = _bare_name(text, expression) if single else None

    def render(variables: dict) -> Any:
        # `{{ name }}` of a string argument: the string itself, without the sandbox's context,
        # budget and conversions, which give exactly that (check_weight and _plain pass a str
        # through). Any other value, a missing name, or an argument named `self` (which jinja's
        # expression call refuses) takes the full path below. Variables are JSON objects, so
        # every key is a string, as `expression(**variables)` requires.
        if bare is not None and "self" not in variables:
            value = variables.get(bare)
            if type(value) is str:
                return value
        try:
            with template_limits.budget():
                if single:
                    value = expression(**variables)
                    template_limits.check_weight(value)
                    return _plain(value)
                return _render_bounded(template, variables)
        except TemplateLimitError as exc:
            raise TemplateLimitError(f"Template {_short(text)!r} failed: {exc}") from None
        except ToolError:
            raise
        except RecursionError:
            raise ToolError(f"Template {_short(text)!r} failed: it recursed too deeply") from None
        except (TemplateError, ArithmeticError, TypeError, ValueError, LookupError) as exc:
            raise ToolError(f"Template {_short(text)!r} failed: {exc}") from exc

    return render


def _bare_name(text: str, expression: Callable[..., Any]) -> str | None:
    """The variable a single-expression template is made of (`{{ text }}`), when evaluating it
    gives that variable's value itself: checked once here by evaluating it over a probe, so a
    name jinja treats specially (`self`, a constant such as `none`) never qualifies."""
    body = ENV.parse(text).body
    if len(body) != 1 or not isinstance(body[0], nodes.Output) or len(body[0].nodes) != 1:
        return None
    node = body[0].nodes[0]
    if not isinstance(node, nodes.Name):
        return None
    probe = object()
    try:
        return node.name if expression(**{node.name: probe}) is probe else None
    except Exception:
        return None


def _render_bounded(template, variables: dict) -> str:
    """`template.render`, with the output counted against the budget as it is produced."""
    pieces = []
    for piece in template.generate(variables):
        template_limits.count_output(piece)
        pieces.append(piece)
    return "".join(pieces)


def _constant(value):
    return lambda variables: value


def _leaf(text: str) -> Callable[[dict], Any] | None:
    return _compile_string(text) if is_template(text) else None


def compile_value(value: Any) -> Callable[[dict], Any]:
    """A renderer for any JSON value: every template string inside it is rendered over `variables`.
    A container renders fresh containers on every call (callers may change what they get)."""
    if isinstance(value, str):
        return _compile_string(value) if is_template(value) else _constant(value)
    if isinstance(value, dict | list | tuple):
        return shapes.compile_shape(value, _leaf)
    # Numbers, booleans and null are immutable: shared safely between calls.
    return _constant(value)


def render_text(value: Any) -> str:
    """What a text field shows of a rendered value that came out as a native type."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()
