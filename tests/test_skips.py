"""The no-silent-skips rule (tests/skips.py): under CI a skip fails, whatever made the test skip
(a skip() call, a skipif mark, an importorskip), unless its reason is on the allowed list;
outside CI a skip stays a skip. Proven on a small suite run by a real pytest."""

import os
import subprocess
import sys
from pathlib import Path

from tests import skips

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
import pytest

def test_calls_skip():
    pytest.skip("no chromium here")

@pytest.mark.skipif(True, reason="no haproxy here")
def test_is_marked_skipif():
    pass

def test_imports_or_skips():
    pytest.importorskip("a_module_nobody_installed")

@pytest.mark.xfail(reason="a known failure", strict=True)
def test_expected_to_fail():
    assert False

def test_passes():
    pass
"""


def run_suite(tmp_path, ci: bool) -> subprocess.CompletedProcess:
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "DJANGO_SETTINGS_MODULE")}
    env.update(PYTHONPATH=str(ROOT), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-c", os.devnull, "--rootdir", str(tmp_path)]
        + ["-p", "tests.skips", "-p", "no:cacheprovider", "-rA", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_under_ci_every_kind_of_skip_fails_and_says_what_it_could_not_reach(tmp_path):
    assert skips.ALLOWED_IN_CI == {}, "each allowed reason needs a test of its own here"
    ran = run_suite(tmp_path, ci=True)
    assert ran.returncode == 1, ran.stdout
    # A skipif skips in the setup phase, so it turns into an error there; the rest into failures.
    outcome = ran.stdout.strip().splitlines()[-1]
    assert "2 failed, 1 passed, 1 xfailed, 1 error" in outcome, ran.stdout
    assert "skipped" not in outcome
    for reason in ("no chromium here", "no haproxy here", "a_module_nobody_installed"):
        said = "skipped under CI, which must reach every test's subject: "
        assert any(said in line and reason in line for line in ran.stdout.splitlines()), reason
    assert "tests/skips.py" in ran.stdout


def test_outside_ci_a_skip_stays_a_skip(tmp_path):
    ran = run_suite(tmp_path, ci=False)
    assert ran.returncode == 0, ran.stdout
    assert "1 passed, 3 skipped, 1 xfailed" in ran.stdout, ran.stdout


def test_a_reason_on_the_allowed_list_may_skip_under_ci(tmp_path):
    (tmp_path / "conftest.py").write_text(
        "from tests import skips\n"
        "skips.ALLOWED_IN_CI['no chromium here'] = 'a machine without a browser, on purpose'\n"
    )
    ran = run_suite(tmp_path, ci=True)
    assert "1 failed, 1 passed, 1 skipped, 1 xfailed, 1 error" in ran.stdout, ran.stdout


def test_ci_turns_the_rule_on_itself():
    """.ci/run exports CI before the tests run: the rule does not rely on the CI service."""
    script = (ROOT / ".ci" / "run").read_text()
    assert script.index('export CI="${CI:-true}"') < script.index("make test")
