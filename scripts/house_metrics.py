"""Figures of the code's shape, for a review of the house (issue 27's before and after):

    .venv/bin/python scripts/house_metrics.py [ROOT]

- lines of product code per top-level package, and the largest package's share;
- package pairs that import each other (an arrow that runs back up between two rooms);
- imports made inside functions (a sign of a dependency the module structure hides);
- functions whose cyclomatic complexity is over 10 (ruff's C901, when ruff is installed);
- the share of function parameters that carry a type annotation (self and cls left out);
- environment reads (os.environ, os.getenv) outside the settings (getmcp/settings.py and
  getmcp/environment/, where every variable is declared); each remaining one is named with
  whether tests/getmcp/test_environment.py allows it (its ALLOWED table says why: an entry
  point naming the settings module, a library's own variable, a variable the operator names);
- in tests/: sleeps (time.sleep, asyncio.sleep, anyio.sleep) and skips (pytest.skip, skipif,
  importorskip).

Product code is every package that pyproject's setuptools `include` ships, without migrations.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# Where the environment is read on purpose: the settings and the package that declares, reads
# and (for the entry points, startup.py) writes every variable.
SETTINGS_MODULES = ("getmcp/settings.py", "getmcp/environment/")
# The reads allowed elsewhere, each with its reason (the test that enforces them).
ALLOWANCES = Path("tests/getmcp/test_environment.py")
SLEEPS = {("time", "sleep"), ("asyncio", "sleep"), ("anyio", "sleep"), ("trio", "sleep")}
SKIPS = {"skip", "skipif", "importorskip"}


@dataclass
class Figures:
    lines: dict[str, int] = field(default_factory=dict)
    mutual: list[tuple[str, str]] = field(default_factory=list)
    local_imports: int = 0
    parameters: int = 0
    typed_parameters: int = 0
    env_reads: list[str] = field(default_factory=list)
    complex_functions: int | None = None
    test_sleeps: int = 0
    test_skips: int = 0


def product_packages(root: Path) -> list[str]:
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    return sorted(p.rstrip("*") for p in patterns if (root / p.rstrip("*")).is_dir())


def product_files(root: Path, package: str) -> list[Path]:
    return [p for p in (root / package).rglob("*.py") if "migrations" not in p.parts]


def _imported(node: ast.AST, module: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".")[: -node.level]
            return [".".join(base + ([node.module] if node.module else []))]
        return [node.module or ""]
    return []


def _dotted(node: ast.AST) -> tuple[str, ...]:
    if isinstance(node, ast.Attribute):
        return (*_dotted(node.value), node.attr)
    if isinstance(node, ast.Name):
        return (node.id,)
    return ()


class _Walker(ast.NodeVisitor):
    def __init__(self, figures: Figures, module: str, packages: set[str], found: dict) -> None:
        self.figures, self.module, self.packages, self.found = figures, module, packages, found
        self.depth = 0

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        args += [a for a in (node.args.vararg, node.args.kwarg) if a]
        for arg in args:
            if arg.arg in ("self", "cls"):
                continue
            self.figures.parameters += 1
            self.figures.typed_parameters += arg.annotation is not None
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        if self.depth:
            self.figures.local_imports += 1
        own = self.module.split(".")[0]
        for name in _imported(node, self.module):
            top = name.split(".")[0]
            if top in self.packages and top != own:
                self.found[(own, top)] = True

    visit_Import = _import
    visit_ImportFrom = _import


def _env_reads(tree: ast.AST) -> int:
    count = 0
    for node in ast.walk(tree):
        dotted = _dotted(node) if isinstance(node, ast.Attribute) else ()
        if dotted[-2:] in (("os", "environ"), ("os", "getenv"), ("os", "environb")):
            count += 1
    return count


def _is_settings(relative: Path) -> bool:
    return any(
        str(relative) == name or (name.endswith("/") and str(relative).startswith(name))
        for name in SETTINGS_MODULES
    )


def _allowances(root: Path) -> set[str]:
    """The files the environment test allows to touch os.environ (its ALLOWED table's keys)."""
    path = root / ALLOWANCES
    if not path.is_file():
        return set()
    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "ALLOWED" for t in targets):
            return set(ast.literal_eval(node.value))
    return set()


def measure(root: Path) -> Figures:
    figures = Figures()
    packages = product_packages(root)
    found: dict[tuple[str, str], bool] = {}
    allowances = _allowances(root)
    for package in packages:
        total = 0
        for path in product_files(root, package):
            text = path.read_text()
            total += len(text.splitlines())
            relative = path.relative_to(root)
            module = ".".join(relative.with_suffix("").parts)
            tree = ast.parse(text, filename=str(path))
            _Walker(figures, module, set(packages), found).visit(tree)
            if not _is_settings(relative) and (reads := _env_reads(tree)):
                allowed = "" if str(relative) in allowances else ", NOT ALLOWED"
                figures.env_reads.append(f"{relative} ({reads}{allowed})")
        figures.lines[package] = total
    figures.mutual = sorted((a, b) for a, b in found if a < b and (b, a) in found)
    figures.complex_functions = _complex_functions(root, packages)
    tests = root / "tests"
    for path in tests.rglob("*.py") if tests.is_dir() else ():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call):
                dotted = _dotted(node.func)
                figures.test_sleeps += dotted[-2:] in SLEEPS
            if isinstance(node, ast.Attribute) and node.attr in SKIPS:
                figures.test_skips += _dotted(node)[:1] == ("pytest",) or node.attr == "skipif"
    return figures


def _complex_functions(root: Path, packages: list[str]) -> int | None:
    command = [sys.executable, "-m", "ruff", "check", "--select", "C901", "--exit-zero"]
    command += ["--config", "lint.mccabe.max-complexity=10", "--output-format", "json"]
    try:
        done = subprocess.run(command + packages, cwd=root, capture_output=True, text=True)
    except OSError:
        return None
    if done.returncode:
        return None
    return len(json.loads(done.stdout or "[]"))


def report(figures: Figures) -> str:
    product = sum(figures.lines.values())
    largest = max(figures.lines, key=figures.lines.__getitem__)
    share = 100 * figures.lines[largest] / max(product, 1)
    typed = 100 * figures.typed_parameters / max(figures.parameters, 1)
    rows = [
        f"product lines: {product}",
        f"largest package: {largest} {figures.lines[largest]} lines ({share:.0f}%)",
        "per package: " + ", ".join(f"{k} {v}" for k, v in sorted(figures.lines.items())),
        f"package pairs importing each other: {len(figures.mutual)} "
        + ", ".join(f"{a}<->{b}" for a, b in figures.mutual),
        f"imports inside functions: {figures.local_imports}",
        f"functions over complexity 10: {figures.complex_functions}",
        f"typed parameters: {typed:.0f}% ({figures.typed_parameters}/{figures.parameters})",
        f"environment reads outside the settings: {len(figures.env_reads)} "
        + ", ".join(figures.env_reads)
        + (f" (each with its reason in {ALLOWANCES}: ALLOWED)" if figures.env_reads else ""),
        f"tests: sleeps {figures.test_sleeps}, skips {figures.test_skips}",
    ]
    return "\n".join(rows)


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    print(report(measure(root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
