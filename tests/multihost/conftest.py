"""The multi-host topology (tests/multihost/topology.py), built once for these tests and torn
down at the end of the session, namespaces included, whatever happened in between.

The time each fault took to heal is printed in the terminal summary (`heal_times`)."""

import json
from pathlib import Path

import pytest

from tests.faults.harness import SEED_TENANT, django_script
from tests.multihost import network
from tests.multihost.topology import Topology, shape_from_environment

HERE = Path(__file__).resolve().parent
QUICK_TASK = {
    "name": "quick_task",
    "description": "Works a little, then answers.",
    "inputSchema": {"type": "object", "properties": {"label": {"type": "string"}}},
    "execution": {"taskSupport": "optional"},
    "kind": "workflow",
    "config": {
        "steps": [
            {"sleep": {"ms": 300}},
            {"return": {"content": [{"type": "text", "text": "done {{ label }}"}]}},
        ]
    },
}
# The faults harness's tenant (an echo tool, API keys), with a task tool beside it.
SEED = SEED_TENANT.replace('"tools": [{', f'"tools": [{QUICK_TASK!r}, {{')
ROOT = HERE.parents[1]
# Written as they are measured: under pytest-xdist the tests run in a worker, while the terminal
# summary is printed by the controller, which reads them back.
HEAL_FILE = ROOT / "results" / "multihost" / "heal-times.json"


class HealTimes(dict):
    def __setitem__(self, fault: str, seconds: float) -> None:
        super().__setitem__(fault, seconds)
        HEAL_FILE.parent.mkdir(parents=True, exist_ok=True)
        HEAL_FILE.write_text(json.dumps(self, indent=1))


@pytest.hookimpl(tryfirst=True)  # before xdist turns the marks into groups (tests/grouping.py)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).resolve().is_relative_to(HERE):
            # One xdist worker builds the hosts and runs every test on them.
            item.add_marker(pytest.mark.xdist_group("multihost"))


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):  # the controller (or a run without xdist)
        HEAL_FILE.unlink(missing_ok=True)


def pytest_terminal_summary(terminalreporter):
    if HEAL_FILE.exists():
        terminalreporter.section("multi-host: time to heal")
        for fault, seconds in json.loads(HEAL_FILE.read_text()).items():
            terminalreporter.write_line(f"{fault}: {seconds:.2f} s")


@pytest.fixture(scope="session")
def topology():
    if reason := network.available():
        pytest.skip(f"multi-host topology: {reason}")
    built = Topology(shape_from_environment()).start()
    try:
        yield built
    finally:
        built.close()


@pytest.fixture(scope="session")
def heal_times():
    return HealTimes()


def on_topology(topology, code: str):
    """Python in a Django process of the topology (the root namespace, an operator's shell)."""
    env = topology.env()
    return django_script(
        code, database_url=env["DATABASE_URL"], redis_url=env["REDIS_URL"], extra_env=env
    )


@pytest.fixture
def tenant(topology):
    """A user's server (echo and quick_task tools), its key and spare keys, on the topology."""
    return on_topology(topology, SEED)
