"""Checks of a Python source that run in this process: cheap and linear in the source's size.

The host never parses tenant code with its own parser: CPython's parser can spend seconds on a
crafted 64 KB source, holding this process. Here the source is only measured and searched for
its `main` (a regular expression over lines); the real parse (syntax errors with their line) is
Monty's, in a sandbox worker, on save (syntax.py) and at every run.
"""

import re
from dataclasses import dataclass

MAX_SOURCE_BYTES = 64 * 1024
SIGNATURES = "async def main(args, ctx) or def main(args) (ctx optional in both)"
# secrets["NAME"], secrets.get("NAME"): the only secrets a source can read (least privilege).
SECRET_REFERENCE = re.compile(
    r"""\bsecrets\s*(?:\[\s*|\.get\(\s*)(['"])([A-Za-z_][A-Za-z0-9_]*)\1"""
)
MAIN_DEF = re.compile(r"^(async[ \t]+)?def[ \t]+main[ \t]*\(", re.MULTILINE)
# How far past `def main(` the parameters are looked for.
SIGNATURE_WINDOW = 2000
PAIRS = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True, slots=True)
class Entry:
    is_async: bool
    takes_ctx: bool


def _parameters(text: str) -> list[str] | None:
    """The parameters between `(` (already consumed) and its `)`, split at top-level commas;
    None when the closing parenthesis is not found in the window."""
    depth, quote, current, found = 0, "", [], []
    for char in text[:SIGNATURE_WINDOW]:
        if quote:
            current.append(char)
            if char == quote:
                quote = ""
            continue
        if char in "'\"":
            quote = char
        elif char in PAIRS:
            depth += 1
        elif char in ")]}":
            if depth == 0:
                found.append("".join(current).strip())
                return [p for p in found if p]
            depth -= 1
        elif char == "," and depth == 0:
            found.append("".join(current).strip())
            current = []
            continue
        elif char == "#" and depth == 0:
            return None  # comments inside the signature: leave it to the run
        current.append(char)
    return None


def check(source: str) -> tuple[list[str], Entry | None]:
    """Problems and, when there are none, how to call `main`."""
    if not isinstance(source, str) or not source.strip():
        return ["is required: a Python module defining main"], None
    if len(source.encode()) > MAX_SOURCE_BYTES:
        return [f"is longer than {MAX_SOURCE_BYTES // 1024} KB"], None
    matches = list(MAIN_DEF.finditer(source))
    if not matches:
        return [f"defines no top-level main: write {SIGNATURES}"], None
    main = matches[-1]
    line = source.count("\n", 0, main.start()) + 1
    parameters = _parameters(source[main.end() :])
    if parameters is None:
        return [f"line {line}: the parameters of main do not close"], None
    positional, required, star = 0, 0, False
    for parameter in parameters:
        name = parameter.split(":", 1)[0].split("=", 1)[0].strip()
        if name in ("/",):
            continue
        if name.startswith("**"):
            break
        if name.startswith("*"):
            star = star or name != "*"
            break
        positional += 1
        required += "=" not in parameter
    if (positional == 0 and not star) or required > 2:
        return [f"line {line}: main must take (args) or (args, ctx): {SIGNATURES}"], None
    return [], Entry(is_async=bool(main.group(1)), takes_ctx=star or positional >= 2)


def referenced_secrets(source: str) -> frozenset[str]:
    return frozenset(match.group(2) for match in SECRET_REFERENCE.finditer(source or ""))
