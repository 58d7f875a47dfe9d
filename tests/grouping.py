"""Which tests share a pytest-xdist worker: a pytest plugin (registered by tests/conftest.py).

`make test` distributes tests one by one (`--dist loadgroup`), except those carrying an
`xdist_group` mark, which all run on one worker. Tests that share a slow fixture narrower than
the session (a live server or Celery worker of one module, the browser of tests/browser, the
live server of one package's conftest) are grouped by that fixture's home, so the fixture is
started once in the run rather than once on each worker that happens to get one of its tests.
"""

import pytest

# Where the fixtures every worker starts anyway are defined (tests/conftest.py, plugins).
_SESSION_HOMES = ("", "tests")


def _module_of(item) -> str:
    return item.nodeid.split("::", 1)[0]


def _home(item, fixturedef) -> str | None:
    """Where the shared instance of `fixturedef` lives, if it is shared across tests and slow."""
    if fixturedef.scope == "module":
        return _module_of(item)
    if fixturedef.scope == "package":
        return fixturedef.baseid
    if (
        fixturedef.scope == "session"
        and fixturedef.baseid not in _SESSION_HOMES
        and "live_database" in fixturedef.argnames  # it starts a live server
    ):
        return fixturedef.baseid
    return None


def group_of(item) -> str | None:
    """The widest home among the shared fixtures `item` uses (a package holds its modules)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    homes = set()
    for name in item.fixturenames:
        for fixturedef in info.name2fixturedefs.get(name, ())[-1:]:
            home = _home(item, fixturedef)
            if home:
                homes.add(home)
    return min(homes, key=len) if homes else None


# Before pytest-xdist's own hook, which turns the marks into the groups it schedules by; after
# any conftest that groups its tests itself (tests/faults/: registered later, so called first).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        group = group_of(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
