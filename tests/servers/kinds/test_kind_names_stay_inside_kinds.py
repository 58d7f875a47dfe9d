"""Nothing outside a kind tests a kind's name: code asks the kind's contract instead
(servers/kinds/contract.py). These scans fail on a comparison that creeps back."""

import ast
import re
from pathlib import Path

import pytest

from servers import prompts, resources
from servers.kinds import KINDS

ROOT = Path(__file__).resolve().parents[3]
PRODUCT = [
    "accounts",
    "activity",
    "api",
    "audit",
    "dashboard",
    "gateway",
    "getmcp",
    "infra",
    "inspector",
    "integrations",
    "mcp_protocol",
    "mcptasks",
    "oauth",
    "observability",
    "servers",
    "vault",
]
# The kinds themselves: tool kinds, and the resource and prompt kinds (static is theirs).
INSIDE_KINDS = ("servers/kinds/", "servers/resources/", "servers/prompts/")
NAMES = frozenset(KINDS) | {resources.STATIC, *resources.KINDS} | {prompts.STATIC, *prompts.KINDS}


def _names_in(node: ast.expr) -> set[str]:
    """The kind names a comparison operand spells out (a string, or a tuple/list/set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_names_in(item) for item in node.elts)) if node.elts else set()
    return set()


def _is_about_kind(node: ast.expr) -> bool:
    """Whether an operand reads a kind: `kind`, `x.kind`, `x["kind"]`, `x.get("kind", ...)`."""
    return re.search(r"kind", ast.unparse(node), re.IGNORECASE) is not None


def name_comparisons(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = set().union(*(_names_in(operand) for operand in operands))
            if named and any(_is_about_kind(o) for o in operands if not _names_in(o)):
                found.append((node.lineno, ast.unparse(node)))
        elif (
            isinstance(node, ast.match_case)
            and isinstance(node.pattern, ast.MatchValue)
            and _names_in(node.pattern.value)
        ):
            found.append((node.pattern.lineno, ast.unparse(node.pattern)))
    return found


def _product_files():
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/migrations/" not in relative and not relative.startswith(INSIDE_KINDS):
                yield relative, path


def test_no_module_outside_the_kinds_compares_a_kind_name():
    offenders = [
        f"{relative}:{line}: {text}"
        for relative, path in _product_files()
        for line, text in name_comparisons(path.read_text())
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "source",
    [
        'if tool.kind != "static": pass',
        'ok = kind in ("http", "upstream")',
        'ok = tool.get("kind", "static") == "workflow"',
        'ok = data.get("kind") == "code"',
        'match kind:\n    case "code": pass',
    ],
)
def test_the_scan_finds_each_shape_of_a_name_test(source):
    assert name_comparisons(source), source


@pytest.mark.parametrize(
    "source",
    [
        'ok = scheme_type == "http"',  # an OpenAPI security scheme, not a tool kind
        'ok = block_kind == "text"',  # not a kind name
        "ok = tool.kind.streams_progress",
    ],
)
def test_the_scan_leaves_other_comparisons_alone(source):
    assert name_comparisons(source) == []


TEMPLATE_TEST = re.compile(
    r"kind\w*\s*(?:==|!=|in)\s*[\"'](" + "|".join(sorted(NAMES)) + r")[\"']", re.IGNORECASE
)


def test_no_template_compares_a_kind_name():
    """Templates ask the kind object of their context (kind.reports_host_calls, ...); the tool
    editor includes a kind's own fields by the template name its contract declares."""
    offenders = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in sorted((ROOT / "templates").rglob("*.html"))
        for match in TEMPLATE_TEST.finditer(path.read_text())
    ]
    assert offenders == []
