"""Fixtures of the fault-injection tests: private services a test may break (see harness.py).

Every test under tests/faults/ carries the `faults` marker (it runs by default, so CI runs it;
`-m "not faults"` skips it locally). The private Postgres cluster and its migrated template
database are started once per session; each test gets a fresh database copied from the template
(a file copy, well under a second) and, if it asks, its own append-only Redis.
"""

import uuid
from pathlib import Path

import pytest

from .harness import (
    FaultLiveServer,
    PrivatePostgres,
    PrivateRedis,
    celery_worker,
    django_script,
)

HERE = Path(__file__).resolve().parent
TEMPLATE = "getmcp_faults_template"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).resolve().is_relative_to(HERE):
            item.add_marker(pytest.mark.faults)


@pytest.fixture(scope="session")
def fault_postgres():
    """A private Postgres cluster with a migrated template database (`TEMPLATE`)."""
    cluster = PrivatePostgres().start()
    try:
        cluster.create_database(TEMPLATE)
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def fault_database(fault_postgres):
    """The URL of a fresh, migrated database on the private cluster."""
    name = f"faults_{uuid.uuid4().hex[:10]}"
    return fault_postgres.create_database(name, template=TEMPLATE)


@pytest.fixture
def fault_redis():
    """A private append-only Redis: kill() then start() brings back its old data."""
    redis = PrivateRedis(appendonly=True).start()
    yield redis
    redis.close()


@pytest.fixture
def start_server():
    """`start_server(database_url=..., redis_url=..., extra_env=...)` -> a live uvicorn process;
    every server started is stopped at the end of the test."""
    started = []

    def start(**kwargs) -> FaultLiveServer:
        server = FaultLiveServer(**kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def start_worker(tmp_path):
    """`start_worker(database_url=..., redis_url=...)` -> a ready Celery worker; stopped after."""
    started = []

    def start(**kwargs):
        worker = celery_worker(log_dir=tmp_path, **kwargs)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def private_django():
    """`private_django(code, database_url=..., redis_url=...)`: see harness.django_script."""
    return django_script
