"""[project.dependencies] is what a plain `pip install .` brings: everything product code imports
must come from it (not from the `dev` extra, which only tests and tools install), and everything
in it must have a job. `make check-install` proves the same on a real fresh install."""

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

from django.conf import settings
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# Declared for a job no import shows, each with the reason.
USED_WITHOUT_IMPORT = {
    "channels-redis": "the live inspector's channel layer across web processes, named by its "
    "dotted path in settings.CHANNEL_LAYERS",
    "psycopg": "the Postgres driver Django loads for a postgres:// DATABASE_URL",
    "uvicorn": "serves the ASGI app (make run, scripts/run.py)",
    "gunicorn": "runs uvicorn workers in the Docker image and docker-compose.yml",
    "pydantic-monty": "installs the code tools' sandbox: its client (the pydantic_monty module) "
    "and the runtime binary, at one version",
}


def product_packages() -> list[str]:
    patterns = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    return sorted(pattern.rstrip("*") for pattern in patterns)


@functools.cache
def imported_modules() -> dict[str, set[str]]:
    """Top-level third-party module -> files importing it (function-level imports included)."""
    first_party = set(product_packages())
    found: dict[str, set[str]] = {}
    for package in product_packages():
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in first_party:
                        found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def declared() -> list[Requirement]:
    return [Requirement(line) for line in PYPROJECT["project"]["dependencies"]]


def installed_closure() -> set[str]:
    """Every distribution a plain install of the declared dependencies brings (with extras)."""
    seen: set[str] = set()
    pending = [(canonicalize_name(r.name), set(r.extras)) for r in declared()]
    while pending:
        name, extras = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for line in importlib.metadata.requires(name) or []:
            requirement = Requirement(line)
            environments = [{"extra": extra} for extra in extras] or [{"extra": ""}]
            if requirement.marker is None or any(
                requirement.marker.evaluate(env) for env in environments
            ):
                pending.append((canonicalize_name(requirement.name), set(requirement.extras)))
    return seen


@functools.cache
def module_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def distributions_of(module: str) -> set[str]:
    return {canonicalize_name(dist) for dist in module_distributions().get(module, [])}


def test_every_module_product_code_imports_comes_with_a_plain_install():
    closure = installed_closure()
    missing = {
        module: sorted(files)
        for module, files in imported_modules().items()
        if not distributions_of(module) & closure
    }
    assert not missing, (
        "imported by product code but not installed by [project.dependencies] "
        f"(add them there, not to the dev extra): {missing}"
    )


def test_every_installed_app_comes_with_a_plain_install():
    closure = installed_closure()
    first_party = set(product_packages())
    apps = {app.split(".")[0] for app in settings.INSTALLED_APPS}
    missing = [
        app
        for app in sorted(apps - first_party - set(sys.stdlib_module_names) - {"django"})
        if not distributions_of(app) & closure
    ]
    assert not missing


def test_every_declared_dependency_has_a_job():
    used = set()
    for module in imported_modules():
        used |= distributions_of(module)
    for app in settings.INSTALLED_APPS:
        used |= distributions_of(app.split(".")[0])
    unused = [
        r.name
        for r in declared()
        if canonicalize_name(r.name) not in used and r.name not in USED_WITHOUT_IMPORT
    ]
    assert not unused, f"declared but used by nothing (remove, or say why): {unused}"


def test_one_http_client_stack():
    closure = installed_closure()
    assert "httpx2" in closure
    assert "httpx" not in closure and "httpcore" not in closure
    for module in ("httpx", "httpcore"):
        assert module not in imported_modules()


def test_the_lock_file_pins_every_declared_dependency():
    pinned = {
        canonicalize_name(line.split("==")[0])
        for line in (ROOT / "requirements.lock").read_text().splitlines()
        if re.match(r"^[A-Za-z0-9]", line)
    }
    stale = [r.name for r in declared() if canonicalize_name(r.name) not in pinned]
    assert not stale, f"run `make lock`: requirements.lock lacks {stale}"
