"""Which names a template reads from outside itself, and which of them nothing provides.

`hi {{ nmae }}!` renders `hi !` (a missing name is empty, servers/templating.py): a typo is
silent at run time, so it is caught when the definition is saved. The names come from jinja's
own analysis of the parsed template (`jinja2.meta.find_undeclared_variables`), so a name a
template sets itself (`{% set %}`, a loop variable, a macro argument) is never reported.
"""

import difflib
import functools
import re
from collections.abc import Iterator
from typing import Any

from jinja2 import TemplateSyntaxError, meta

from .templating import ENV, is_template

# `range`, `dict`, `namespace`... are there in every template.
GLOBALS = frozenset(ENV.globals)
# A workflow step without `into` stores its answer under `step<position>` (`step2`, `step3_0`).
_STEP_KEY = re.compile(r"^step\d+(?:_\d+)*$")


@functools.lru_cache(maxsize=4096)
def read_names(text: str) -> frozenset[str]:
    """The names a template string reads that it does not define; empty for a template that
    does not parse (its syntax error is reported by the compile check)."""
    try:
        return frozenset(meta.find_undeclared_variables(ENV.parse(text))) - GLOBALS
    except TemplateSyntaxError:
        return frozenset()


def templates_in(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(path, template) of every template string inside a JSON value."""
    if isinstance(value, str):
        if is_template(value):
            yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from templates_in(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from templates_in(item, f"{path}[{index}]")


def is_step_key(name: str) -> bool:
    return bool(_STEP_KEY.match(name))


def unknown_name_problems(
    value: Any, path: str, known: set[str], *, what: str = "arguments"
) -> list[str]:
    """One message per template inside `value` that reads a name outside `known`, naming the
    name, what is known, and the closest known name when there is one."""
    problems = []
    for where, text in templates_in(value, path):
        unknown = sorted(
            name for name in read_names(text) if name not in known and not is_step_key(name)
        )
        for name in unknown:
            problems.append(f"{where}: {_unknown_message(name, known, what)}")
    return problems


def _unknown_message(name: str, known: set[str], what: str) -> str:
    listed = ", ".join(sorted(known)) if known else "none"
    message = f"the template reads {name!r}, which is not one of its {what} ({listed})"
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    if close:
        message += f"; did you mean {close[0]!r}?"
    return message
