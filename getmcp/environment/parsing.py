"""How a variable is declared and how its text becomes its value.

The parsers are the ones getmcp/settings.py always used, so a value means what it meant: a flag
is on only for 1/true/yes/on in any case (anything else, empty included, is off); a list is
comma-separated, blanks dropped; numbers go through Python's int() and float(), so an empty or
malformed one fails at start; a string is taken as it is. An unset variable takes its default.

A well-kept library does this too (pydantic-settings, which the `mcp` package already brings), but
importing it costs each process about 200 ms of CPU and 24 MB (no product process imports
pydantic today), and its parsing differs (JSON lists, strict flags, case-insensitive names), so
each variable would need overriding back to the above.
"""

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The checkout (or install) root, where var/ lives: getmcp/environment/parsing.py is two below.
BASE_DIR = Path(__file__).resolve().parents[2]
TRUTHY = frozenset({"1", "true", "yes", "on"})


def flag(raw: str) -> bool:
    return raw.lower() in TRUTHY


def commas(raw: str) -> list[str]:
    return [item.strip() for item in raw.split(",") if item.strip()]


def issuer(raw: str) -> str:
    return raw.rstrip("/")


# The parser of each declared type (a variable may name its own instead).
PARSERS: dict[Any, Callable[[str], Any]] = {bool: flag, int: int, float: float, str: str}
PARSERS[list[str]] = commas


@dataclass(frozen=True)
class Variable:
    """One variable: its default, what it means (the README's words), the README's default
    column when the bare value would mislead (`shown`), and whether the app containers get it
    (`deployed`: False for what only the test runner reads). Name and type come from the
    declaration `NAME: type = var(...)`."""

    default: Any
    meaning: str
    parse: Callable[[str], Any] | None = None
    shown: str | None = None
    deployed: bool = True


def var(
    default: Any,
    meaning: str,
    *,
    parse: Callable[[str], Any] | None = None,
    shown: str | None = None,
    deployed: bool = True,
) -> Any:
    """Declares a variable (typed Any so that `NAME: int = var(60, ...)` reads as an int)."""
    return Variable(default, meaning, parse, shown, deployed)


class Variables:
    """Declarations as class attributes; an instance holds their values read from `environ`
    (the process environment unless given)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        environ = os.environ if environ is None else environ
        for name, (kind, variable) in self.declared().items():
            raw = environ.get(name)
            parse = variable.parse or PARSERS[kind]
            value = variable.default if raw is None else parse(raw)
            if raw is None and isinstance(value, list):
                value = list(value)
            elif raw is None and kind is float:
                value = float(value)
            setattr(self, name, value)

    @classmethod
    def declared(cls) -> dict[str, tuple[Any, Variable]]:
        """Every variable of this class and its bases, in declaration order (bases first)."""
        found: dict[str, tuple[Any, Variable]] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Variable):
                    found[name] = (klass.__annotations__[name], value)
        return found
