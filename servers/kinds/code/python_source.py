"""Checks of a Python source on save: it parses, and it defines `main` the way the runtime calls it.

Parsing uses the host's own `ast` module (it only parses, it runs nothing; sources are capped in
size so parsing stays cheap). Monty implements most but not all of Python: what it does not
support surfaces as a clear error at the first test run.
"""

import ast
import re
from dataclasses import dataclass

MAX_SOURCE_BYTES = 64 * 1024
SIGNATURES = "async def main(args, ctx) or def main(args) (ctx optional in both)"
# secrets["NAME"], secrets.get("NAME"): the only secrets a source can read (least privilege).
SECRET_REFERENCE = re.compile(
    r"""\bsecrets\s*(?:\[\s*|\.get\(\s*)(['"])([A-Za-z_][A-Za-z0-9_]*)\1"""
)


@dataclass(frozen=True, slots=True)
class Entry:
    is_async: bool
    takes_ctx: bool


def check(source) -> tuple[list[str], Entry | None]:
    """Problems (`line N: ...`) and, when there are none, how to call `main`."""
    if not isinstance(source, str) or not source.strip():
        return ["is required: a Python module defining main"], None
    if len(source.encode()) > MAX_SOURCE_BYTES:
        return [f"is longer than {MAX_SOURCE_BYTES // 1024} KB"], None
    try:
        tree = ast.parse(source, filename="main.py")
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        return [f"{where}: {exc.msg}"], None
    except (ValueError, RecursionError, MemoryError) as exc:
        return [f"cannot be parsed: {exc}"], None
    mains = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "main"
    ]
    if not mains:
        return [f"defines no top-level main: write {SIGNATURES}"], None
    main = mains[-1]
    arguments = main.args
    positional = [*arguments.posonlyargs, *arguments.args]
    required = len(positional) - len(arguments.defaults)
    if (arguments.vararg is None and not positional) or required > 2:
        return [f"line {main.lineno}: main must take (args) or (args, ctx): {SIGNATURES}"], None
    takes_ctx = arguments.vararg is not None or len(positional) >= 2
    return [], Entry(is_async=isinstance(main, ast.AsyncFunctionDef), takes_ctx=takes_ctx)


def referenced_secrets(source: str) -> frozenset[str]:
    return frozenset(match.group(2) for match in SECRET_REFERENCE.finditer(source or ""))
