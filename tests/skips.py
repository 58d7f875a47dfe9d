"""No silent skips in CI: a pytest plugin (registered by tests/conftest.py).

A skip hides whatever it skipped, so under CI (the environment variable CI set, as .ci/run runs)
a skipped test fails unless its reason is on the short list below, each entry saying why that
skip is expected on the CI machine. CI installs everything the suite needs (Postgres, Redis,
Chromium, haproxy, Node), so a test that skips there could not reach its subject: that is a
failure to see, not a pass. Outside CI skips stay skips, so a partial machine can run what it
can; the summary (`-ra`) lists them.
"""

import os

import pytest

# Reasons (substrings of the skip message) a CI run may skip for, with why.
ALLOWED_IN_CI: dict[str, str] = {}


def _allowed(message: str) -> bool:
    return any(reason in message for reason in ALLOWED_IN_CI)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not os.environ.get("CI") or not report.skipped or hasattr(report, "wasxfail"):
        return
    message = (
        str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    )
    if _allowed(message):
        return
    report.outcome = "failed"
    report.longrepr = (
        f"skipped under CI, which must reach every test's subject: {message}\n"
        "(tests/skips.py: install what it needs in .ci/run, or name the reason in ALLOWED_IN_CI "
        "with why it cannot run there)"
    )
