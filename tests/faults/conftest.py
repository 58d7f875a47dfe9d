"""Fixtures of the fault-injection tests: private services a test may break (see harness.py).

Every test under tests/faults/ carries the `faults` marker (it runs by default, so CI runs it;
`-m "not faults"` skips it locally). The private Postgres cluster and its migrated template
database (holding seeded tenants) are started once per session.

Two ways to use them:
- `stack`: the shared live server on its own database copy and append-only Redis, started once
  (a server start is the slowest step), with short timeouts (`STACK_ENV`) and a fresh tenant for
  each test. Each test may break Redis or Postgres; both are brought back before and after it.
- `fault_database` (a fresh copy per test, its tenant is `fault_tenant`), `fault_redis` and
  `start_server`, for a test that needs a server of its own (other settings, a clean process).
"""

import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from .harness import (
    FaultLiveServer,
    PrivatePostgres,
    PrivateRedis,
    celery_worker,
    django_script,
    seed_tenants,
)

HERE = Path(__file__).resolve().parent
TEMPLATE = "getmcp_faults_template"
TENANTS = 20  # one per test using `stack`, plus the one of `fault_tenant`
# The shared server's settings: short deadlines, so faults show within a test's patience.
STACK_ENV = {
    "REDIS_SOCKET_TIMEOUT_SECONDS": "1",
    "HTTP_HEADER_TIMEOUT_SECONDS": "2",
    "HTTP_BODY_TIMEOUT_SECONDS": "2",
}


@pytest.hookimpl(tryfirst=True)  # before xdist turns the marks into groups (tests/grouping.py)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).resolve().is_relative_to(HERE):
            item.add_marker(pytest.mark.faults)
            # One xdist worker runs them all (`--dist loadgroup`): they share a session's
            # private Postgres cluster and seeded tenants, which are slow to start.
            item.add_marker(pytest.mark.xdist_group("faults"))


@pytest.fixture(scope="session")
def _fault_cluster():
    """A private Postgres cluster with a migrated template database (`TEMPLATE`) holding one
    seeded tenant (harness.seed_tenant), and that tenant's secrets."""
    cluster = PrivatePostgres().start()
    try:
        url = cluster.create_database(TEMPLATE)
        # Seeded without Redis (in-process fake): each test brings its own, empty Redis.
        tenants = seed_tenants(TENANTS, database_url=url, redis_url="")
        yield cluster, tenants
    finally:
        cluster.close()


@pytest.fixture(scope="session")
def fault_postgres(_fault_cluster):
    return _fault_cluster[0]


@pytest.fixture
def fault_tenant(_fault_cluster, fault_database):
    """The seeded tenant of `fault_database`: slug, key, key_id, spare_keys, token, email..."""
    return dict(_fault_cluster[1][0])


@pytest.fixture(scope="session")
def _shared_stack(_fault_cluster):
    cluster, tenants = _fault_cluster
    url = cluster.create_database("faults_shared", template=TEMPLATE)
    redis = PrivateRedis(appendonly=True).start()
    server = FaultLiveServer(database_url=url, redis_url=redis.url(), extra_env=STACK_ENV)
    stack = SimpleNamespace(
        postgres=cluster, database_url=url, redis=redis, server=server, tenants=iter(tenants[1:])
    )
    yield stack
    server.stop()
    redis.close()


def _heal(stack) -> None:
    stack.redis.thaw()
    if not stack.redis.running:
        stack.redis.start()
    if not stack.postgres.accepts_connections():
        stack.postgres.start()


@pytest.fixture
def stack(_shared_stack):
    """The shared live server with its Redis (`redis`), Postgres (`postgres`, `database_url`)
    and a tenant no other test uses (`tenant`); both services healthy before and after."""
    _heal(_shared_stack)
    view = SimpleNamespace(**vars(_shared_stack), tenant=next(_shared_stack.tenants))
    yield view
    _heal(_shared_stack)


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
