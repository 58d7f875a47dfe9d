"""getmcp/environment/: every variable declared once, parsed as the settings always parsed it, and
no other product module reading the environment or repeating a setting's default."""

import ast
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from getmcp.environment import Environment, deployed_names, table_rows
from getmcp.environment.parsing import Variables, var

ROOT = Path(__file__).resolve().parents[2]


def test_an_unset_variable_takes_its_declared_default():
    environment = Environment({})
    assert environment.DATABASE_CONN_MAX_AGE == 60
    assert environment.DEBUG is False
    assert environment.ALLOWED_HOSTS == ["localhost", "127.0.0.1", "[::1]"]
    assert environment.MCP_SSE_KEEPALIVE_SECONDS == 15.0
    assert isinstance(environment.MCP_SSE_KEEPALIVE_SECONDS, float)
    assert environment.REDIS_URL == "" and environment.LOG_LEVEL == "INFO"
    assert Path(environment.EMAIL_FILE_PATH) == ROOT / "var" / "mail"


@pytest.mark.parametrize(
    ("raw", "on"),
    [("1", True), ("true", True), ("TRUE", True), ("Yes", True), ("on", True)]
    + [("0", False), ("false", False), ("", False), ("garbage", False), (" true", False)],
)
def test_a_flag_is_on_only_for_1_true_yes_or_on_in_any_case(raw, on):
    assert Environment({"DEBUG": raw}).DEBUG is on


def test_a_list_is_comma_separated_with_blanks_dropped_and_an_empty_one_is_empty():
    assert Environment({"SECRETS_KEYS": " k1 , ,k2,"}).SECRETS_KEYS == ["k1", "k2"]
    assert Environment({"ALLOWED_HOSTS": ""}).ALLOWED_HOSTS == []


def test_numbers_go_through_int_and_float_so_an_empty_or_malformed_one_fails_at_start():
    environment = Environment({"MCP_MAX_BODY_BYTES": "1_024", "CALL_LOG_FLUSH_SECONDS": "2.5"})
    assert environment.MCP_MAX_BODY_BYTES == 1024 and environment.CALL_LOG_FLUSH_SECONDS == 2.5
    with pytest.raises(ValueError):
        Environment({"MCP_MAX_BODY_BYTES": ""})
    with pytest.raises(ValueError):
        Environment({"REDIS_HEALTH_CHECK_SECONDS": "1.5"})


def test_a_string_set_empty_stays_empty_and_names_are_matched_exactly():
    environment = Environment({"OTEL_SERVICE_NAME": "", "debug": "true"})
    assert environment.OTEL_SERVICE_NAME == "" and environment.DEBUG is False


def test_the_issuer_loses_its_trailing_slashes():
    assert Environment({"OAUTH_ISSUER": "https://auth.example.com//"}).OAUTH_ISSUER == (
        "https://auth.example.com"
    )


def test_a_declaration_without_a_parser_for_its_type_is_refused():
    class Odd(Variables):
        ODD: tuple = var((), "no parser for tuples")

    with pytest.raises(KeyError):
        Odd({"ODD": "x"})


# Django settings named otherwise than the variable they come from.
WIRED_ELSEWHERE = {
    "DATABASE_CONN_MAX_AGE": "DATABASES['default']['CONN_MAX_AGE']",
    "LOG_LEVEL": "LOGGING['root']['level']",
    "SECURE_COOKIES": "SESSION_COOKIE_SECURE and CSRF_COOKIE_SECURE (without DEBUG)",
    "TEST_DB_NAME": "DATABASES['default']['TEST']['NAME']",
}
SPECIAL_VALUES = {
    "DATABASE_URL": "postgres://someone@db.example:5432/getmcp",
    "REDIS_URL": "redis://redis.example:6379/3",
    "OAUTH_ISSUER": "https://auth.example/",
}


def not_the_default(name: str, kind, default) -> str:
    if name in SPECIAL_VALUES:
        return SPECIAL_VALUES[name]
    if kind is bool:
        return "yes"
    if kind in (int, float):
        return str(default + 7)
    if kind == list[str]:
        return f"{name.lower()}-a, ,{name.lower()}-b"
    return f"{name.lower()}-value"


def settings_loaded_with(environ: dict[str, str], names: list[str]) -> dict[str, str]:
    """repr() of each named Django setting, as getmcp/settings.py makes it from `environ` alone
    (a fresh interpreter)."""
    script = (
        "import json, sys\n"
        "from getmcp import settings\n"
        "print(json.dumps({n: repr(eval(n, vars(settings))) for n in sys.argv[1:]}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, *names],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], **environ},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_every_declared_variable_becomes_the_django_setting_of_its_name_or_a_named_one():
    environ = {
        name: not_the_default(name, kind, variable.default)
        for name, (kind, variable) in Environment.declared().items()
    }
    expected = Environment(environ)
    same_name = [name for name in Environment.declared() if name not in WIRED_ELSEWHERE]
    elsewhere = {WIRED_ELSEWHERE[name]: name for name in ("DATABASE_CONN_MAX_AGE", "LOG_LEVEL")}
    elsewhere["DATABASES['default']['TEST']['NAME']"] = "TEST_DB_NAME"
    loaded = settings_loaded_with(environ, same_name + list(elsewhere))
    for name in same_name:
        assert loaded[name] == repr(getattr(expected, name)), name
    for expression, name in elsewhere.items():
        assert loaded[expression] == repr(getattr(expected, name)), name
    # The cookie flag applies without DEBUG.
    cookies = ["SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"]
    assert settings_loaded_with({"SECURE_COOKIES": "on"}, cookies) == dict.fromkeys(cookies, "True")


def test_an_unset_request_state_secret_is_the_secret_key():
    loaded = settings_loaded_with({"SECRET_KEY": "k"}, ["MCP_REQUEST_STATE_SECRET"])
    assert loaded == {"MCP_REQUEST_STATE_SECRET": "'k'"}


def test_the_readme_table_has_a_row_per_variable_and_the_containers_get_all_but_the_test_runners():
    assert len(table_rows()) == len(Environment.declared()) + 2
    assert set(Environment.declared()) - deployed_names() == {"TEST_DB_NAME"}


# -- Nobody else reads the environment -------------------------------------------------------------

# The one place that reads it.
ENVIRONMENT = ROOT / "getmcp" / "environment"
# Where another product module may still touch os.environ, and why: the only forms allowed there.
ALLOWED = {
    # Entry points outside the package naming the settings module before Django loads it (the
    # package's own, ASGI, WSGI and Celery, ask getmcp/environment/startup.py): they write what
    # getmcp/environment/ then reads.
    "manage.py": {"os.environ.setdefault"},
    "scripts/check_install.py": {"os.environ.setdefault"},
    # prometheus_client's own variable: the library reads it when imported, and prepare() sets it
    # at run time for the workers a parent is about to fork; not a setting of ours.
    "observability/multiproc.py": {"os.environ.get"},
    # A password the operator hands over in a variable they name (--password-env), kept out of
    # the command line; the name is the command's input, not a setting.
    "accounts/management/commands/createuser.py": {"os.environ.get"},
    "servers/management/commands/demo.py": {"os.environ.get"},
}


def product_files() -> list[Path]:
    """The shipped packages (pyproject's package list), manage.py and the scripts that run the
    platform. bench/ is a harness around it, with knobs of its own (BENCH_*)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = [
        p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    ]
    files = [ROOT / "manage.py", *sorted((ROOT / "scripts").glob("*.py"))]
    for package in packages:
        files += sorted(p for p in (ROOT / package).rglob("*.py") if "migrations" not in p.parts)
    return files


def environment_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, form) of each read of the process environment: os.environ.get/setdefault/pop
    calls, os.getenv, os.environ[...] loads, `in os.environ`, and os.environ imported by name.
    Passing os.environ whole (a child process's environment) is not a read."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = ast.unparse(node.func)
            if function in ("os.getenv", "os.getenvb"):
                found.append((node.lineno, "os.getenv"))
            elif function.startswith("os.environ.") and function != "os.environ.copy":
                found.append((node.lineno, function))
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            found.append((node.lineno, "os.environ[]" if isinstance(node.ctx, ast.Load) else "set"))
        elif isinstance(node, ast.Compare) and any(
            ast.unparse(c) == "os.environ" for c in node.comparators
        ):
            found.append((node.lineno, "in os.environ"))
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(alias.name in ("environ", "getenv") for alias in node.names)
        ):
            found.append((node.lineno, "from os import environ"))
    return [(line, form) for line, form in found if form != "set"]


def test_the_scan_finds_each_way_of_reading_the_environment():
    source = """
import os
from os import environ
os.environ.get("A"); os.getenv("B"); os.environ["C"]; "D" in os.environ
os.environ["E"] = "1"; child = os.environ | {"F": "1"}
"""
    forms = [form for _, form in environment_reads(ast.parse(source))]
    assert sorted(forms) == sorted(
        ["from os import environ", "os.environ.get", "os.getenv", "os.environ[]", "in os.environ"]
    )


def test_no_product_module_but_getmcp_environment_reads_the_environment():
    offences = []
    for path in product_files():
        if path.is_relative_to(ENVIRONMENT):
            continue
        relative = str(path.relative_to(ROOT))
        for line, form in environment_reads(ast.parse(path.read_text())):
            if form not in ALLOWED.get(relative, set()):
                offences.append(f"{relative}:{line} {form}")
    assert not offences, offences
    assert len(product_files()) > 300


def test_the_allowances_are_still_needed():
    """An allowance whose module no longer reads the environment goes."""
    for relative, forms in ALLOWED.items():
        used = {form for _, form in environment_reads(ast.parse((ROOT / relative).read_text()))}
        assert used == forms, (relative, used)


def default_getattrs(tree: ast.AST) -> list[int]:
    """Lines of getattr(settings, NAME, default): a second definition of a setting's default."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and ast.unparse(node.func) == "getattr"
        and len(node.args) == 3
        and ast.unparse(node.args[0]).split(".")[-1] in ("settings", "django_settings")
    ]


def test_no_product_module_repeats_a_settings_default_through_getattr():
    assert default_getattrs(ast.parse('getattr(settings, "X", 1); getattr(settings, "Y")')) == [1]
    offences = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in product_files()
        for line in default_getattrs(ast.parse(path.read_text()))
    ]
    assert not offences, offences
