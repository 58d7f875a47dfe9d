"""A JSON value whose leaves may be templates, turned into one renderer: a function shared by
every value of the same shape, bound to the value's own leaves.

Why: a compiled server keeps a renderer per tool result, prompt and request part, and a warm call
to one of 10,000 servers finds that server's renderer out of the CPU's caches. A tree of closures
(one per container and leaf) costs a cache miss per object on such a call; here a value costs two
objects of its own (a `functools.partial` and its tuple of leaves), and the code that builds the
containers is shared by every value of its shape across tenants (docs/scaling.md, "Fewer
objects per server").

The generated source holds only argument names, brackets and colons: a tenant's keys and texts
are arguments, never source, so nothing a tenant writes is compiled as Python.
"""

import functools
from collections.abc import Callable
from typing import Any

# Past these the value is rendered by a tree of closures instead: the generated expression
# would nest deeper than CPython's parser allows (200 brackets) or take long to compile.
MAX_DEPTH = 32
MAX_LEAVES = 256

Renderer = Callable[[dict], Any]


class _TooBig(Exception):
    pass


def compile_shape(value: dict | list | tuple, leaf: Callable[[str], Renderer | None]) -> Renderer:
    """A renderer of a container; `leaf(text)` gives a string's renderer, or None for a string
    rendered as itself."""
    leaves: list[Any] = []
    try:
        expression = _expression(value, leaf, leaves, 0)
    except _TooBig:
        return _tree(value, leaf)
    return functools.partial(_function(len(leaves), expression), *leaves)


def _expression(
    value: Any, leaf: Callable[[str], Renderer | None], leaves: list, depth: int
) -> str:
    if depth > MAX_DEPTH or len(leaves) > MAX_LEAVES:
        raise _TooBig
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            leaves.append(key)
            name = f"a{len(leaves) - 1}"
            items.append(f"{name}: {_expression(item, leaf, leaves, depth + 1)}")
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_expression(item, leaf, leaves, depth + 1) for item in value) + "]"
    render = _renderer_of(value, leaf)
    leaves.append(value if render is None else render)
    name = f"a{len(leaves) - 1}"
    # Numbers, booleans, null and plain strings are immutable: shared safely between calls.
    return name if render is None else f"{name}(v)"


def _renderer_of(value: Any, leaf: Callable[[str], Renderer | None]) -> Renderer | None:
    """A leaf's renderer, or None for a value rendered as itself."""
    return leaf(value) if isinstance(value, str) else None


@functools.lru_cache(maxsize=2048)
def _function(arity: int, expression: str) -> Callable[..., Any]:
    arguments = ", ".join(f"a{index}" for index in range(arity))
    source = f"def render({arguments}{', ' if arguments else ''}v):\n    return {expression}\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, "<template shape>", "exec"), {"__builtins__": {}}, namespace)  # noqa: S102
    return namespace["render"]


def _tree(value: Any, leaf: Callable[[str], Renderer | None]) -> Renderer:
    """The renderer of a value too big for one expression: a closure per container."""
    if isinstance(value, dict):
        parts = tuple((key, _tree(item, leaf)) for key, item in value.items())
        return lambda variables: {key: render(variables) for key, render in parts}
    if isinstance(value, list | tuple):
        items = tuple(_tree(item, leaf) for item in value)
        return lambda variables: [render(variables) for render in items]
    return _renderer_of(value, leaf) or (lambda variables: value)
