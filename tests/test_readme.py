"""The README's commands work exactly as written on a fresh machine (a fresh database that
`make run` has set up: migrated, with the demo user holding the `demo` slug)."""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def code_block_after(heading: str) -> list[str]:
    section = README.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def fresh_site(tmp_path_factory):
    """A new SQLite database in embedded mode, set up as `make run` does before serving."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "TEST_DB_NAME", "GETMCP_PASSWORD")
    }
    env["DATABASE_URL"] = f"sqlite:///{tmp_path_factory.mktemp('site') / 'db.sqlite3'}"
    for command in (["migrate", "--noinput"], ["demo"]):
        subprocess.run(
            [str(ROOT / ".venv/bin/python"), "manage.py", *command],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
    return env


def shell(line: str, env: dict, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", line], cwd=ROOT, env=env, capture_output=True, text=True, **kwargs
    )


def test_the_servers_as_code_commands_work_as_written(fresh_site):
    lines = code_block_after("Servers as code")
    assert any("createuser" in line for line in lines)
    env = {**fresh_site, "GETMCP_PASSWORD": "a long enough readme passphrase"}
    outputs = []
    for line in lines:
        done = shell(line, env, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        outputs.append(done.stdout)
    exported = outputs[-1]
    assert exported.startswith("slug: ") or "\nslug: " in exported
    assert "tools:" in exported


def test_createuser_without_a_terminal_says_how_to_give_the_password(fresh_site):
    done = shell(
        ".venv/bin/python manage.py createuser nobody@example.com",
        fresh_site,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1
    assert "no terminal to ask for a password" in done.stderr
    assert "Traceback" not in done.stderr and "EOFError" not in done.stderr


def test_createuser_reads_the_password_from_standard_input(fresh_site):
    done = shell(
        ".venv/bin/python manage.py createuser piped@example.com --password-stdin",
        fresh_site,
        input="a long enough piped passphrase\n",
    )
    assert done.returncode == 0, done.stderr
    assert "Created user piped@example.com" in done.stdout


def test_the_readme_documents_the_legacy_sse_endpoint_as_the_server_routes_it():
    from gateway.endpoint.app import ROUTES

    assert "/sse" in ROUTES and "/messages/" in ROUTES
    assert "`/mcp/<slug>/sse`" in README and "/mcp/<slug>/messages/?session_id=" in README


def test_every_setting_of_the_settings_module_is_in_the_readmes_table():
    from tests.test_setup_files import settings_read_from_the_environment

    table = README.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    documented = {
        name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split(" | ")[0])
    }
    missing = settings_read_from_the_environment() - documented
    assert not missing, sorted(missing)


def test_the_readmes_settings_table_is_the_one_generated_from_the_declarations():
    from getmcp.environment import table_rows
    from scripts import settings_table

    assert settings_table.with_table(README, table_rows()) == README, "run make settings-table"
    assert settings_table.main(["--check"]) == 0
    # One row per variable, each once.
    table = README.split(settings_table.BEGIN, 1)[1].split(settings_table.END, 1)[0]
    names = re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", table, flags=re.M)
    assert len(names) == len(set(names)) == len(table_rows()) - 2
