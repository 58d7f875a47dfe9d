import os
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx2
import pytest
from django.conf import settings
from django.db import connection

from accounts.models import User
from tests.clock import clock  # noqa: F401 (a fixture every test may ask for)
from tests.identity.oidc import oidc_provider  # noqa: F401 (the session's test OpenID provider)
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def user(db):
    return User.objects.create_user("alice@example.com", "correct horse battery staple")


@pytest.fixture
def org(user):
    return user.personal_organization()


@pytest.fixture
def outsider(db):
    """A user of another organization: nothing of `org` may ever reach them."""
    return User.objects.create_user("mallory@example.net", "another long passphrase")


@pytest.fixture
def outsider_org(outsider):
    return outsider.personal_organization()


def worker_redis_url(url: str, worker: str | None) -> str:
    """The Redis URL of one pytest-xdist worker: the run's database number plus the worker's
    index plus one (gw0 -> +1), so parallel workers never flush or read each other's keys.
    A serial run (no worker) keeps the URL as given."""
    if not url or not worker or not worker.startswith("gw"):
        return url
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    database = (base + int(worker[2:]) + 1) % 16
    return urlunsplit(parts._replace(path=f"/{database}"))


def pytest_configure(config):
    from tests import grouping, skips, threads

    # After every test: no thread it started may still be running (tests/threads.py).
    config.pluginmanager.register(threads, "getmcp-thread-guard")
    # Tests sharing a slow module- or package-wide fixture run on one xdist worker.
    config.pluginmanager.register(grouping, "getmcp-xdist-groups")
    # Under CI a skip fails unless its reason is on tests/skips.py's short list.
    config.pluginmanager.register(skips, "getmcp-no-silent-skips")
    # Each xdist worker has its own Redis database; its live servers and Celery workers inherit
    # it through the environment. (pytest-django gives each its own Postgres test database.)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and settings.REDIS_URL:
        url = worker_redis_url(settings.REDIS_URL, worker)
        os.environ["REDIS_URL"] = settings.REDIS_URL = url
        settings.CELERY_BROKER_URL = url
    # Password hashing is deliberately slow; tests create many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # No change-log thread in the test process: it would hold a connection to the test database
    # past its teardown. Live servers (subprocesses) run it; tests/faults/ proves it there.
    settings.SECURITY_RECHECK_SECONDS = 0


@pytest.fixture(scope="session", autouse=True)
def _fresh_redis():
    """Each run starts from an empty Redis database (tests use their own DB number)."""
    if settings.REDIS_URL:
        from infra.redis import sync_client

        sync_client().flushdb()


@pytest.fixture(autouse=True)
def _fresh_process_caches():
    """Rolled-back test transactions never bump generations, so per-process caches must not
    carry a compiled server or a key from one test into the next."""
    from connections import token_cache
    from gateway.pipeline import credentials as auth
    from servers.snapshot import clear_cache

    clear_cache()
    auth.cache.clear()
    token_cache.clear()
    yield
    clear_cache()
    auth.cache.clear()
    token_cache.clear()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """A real uvicorn (or gunicorn) process serving getmcp.asgi on loopback, on the test database."""

    def __init__(
        self,
        database_name: str,
        extra_env=None,
        own_site_url: bool = False,
        workers: int = 1,
        gunicorn: bool = False,
    ):
        self.port = free_port()
        self.url = f"http://localhost:{self.port}"
        if own_site_url:
            # Links and OAuth metadata name this server (the issuer must be where it answers).
            extra_env = {"SITE_URL": self.url, **(extra_env or {})}
        db = settings.DATABASES["default"]
        env = {
            **os.environ,
            "DATABASE_URL": (
                f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/"
                f"{database_name}"
            ),
            "REDIS_URL": settings.REDIS_URL,
            "MCP_SSE_KEEPALIVE_SECONDS": "1",
            **(extra_env or {}),
        }
        self.log_path = ROOT / "var" / f"live-{self.port}.log"
        self.log_path.parent.mkdir(exist_ok=True)
        self._log = open(self.log_path, "wb")  # noqa: SIM115 (closed in stop)
        if gunicorn:  # as the Docker image serves: gunicorn with getmcp's uvicorn worker class
            command = ["gunicorn", "getmcp.asgi:application", "--worker-class"]
            command += ["getmcp.http_protocol.UvicornWorker", "--bind", f"127.0.0.1:{self.port}"]
            command += ["--workers", str(workers), "--log-level", "warning"]
        else:
            command = ["uvicorn", "getmcp.asgi:application", "--http"]
            command += ["getmcp.http_protocol:HttpProtocol", "--host", "127.0.0.1"]
            command += ["--port", str(self.port), "--log-level", "warning"]
            command += ["--workers", str(workers)] if workers > 1 else []
        self.process = subprocess.Popen(
            [sys.executable, "-m", *command],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self._wait_ready()

    def _wait_ready(self):
        # Generous: on a loaded machine (parallel workers, other jobs) Django's start alone can
        # take half a minute, and a session fixture that fails here fails every test using it.
        def answers() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()}")
            try:
                httpx2.get(self.url + "/mcp/-", timeout=1)
            except httpx2.HTTPError:
                return False
            return True

        wait_until(
            answers,
            timeout=float(os.environ.get("LIVE_SERVER_START_SECONDS", "120")),
            interval=0.1,
            what=f"the live server to answer on {self.url}",
        )

    def mcp_url(self, slug: str) -> str:
        return f"{self.url}/mcp/{slug}"

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self._log.close()


@pytest.fixture(scope="session")
def live_database(request, django_db_setup, django_db_blocker):
    """The test database, created even when no collected test carries a django_db mark
    (pytest-django only creates it for those)."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    created = None
    # Set up already when the connection names the test database (TEST_DB_NAME may be any name).
    if connection.settings_dict["NAME"] != connection.creation._get_test_db_name():
        with django_db_blocker.unblock():
            created = setup_databases(verbosity=0, interactive=False, aliases={"default"})
    name = connection.settings_dict["NAME"]
    yield name
    # Connections left in worker threads (asgiref's executor, test helper threads) would make
    # DROP DATABASE fail; end them before the test database is torn down.
    if connection.vendor == "postgresql":
        with django_db_blocker.unblock(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                [name],
            )
    if created is not None:
        with django_db_blocker.unblock():
            teardown_databases(created, verbosity=0)


@pytest.fixture(scope="session")
def asgi_server(live_database):
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("live-server tests need DATABASE_URL pointing at Postgres")
    server = LiveServer(live_database)
    yield server
    server.stop()


@pytest.fixture
def committed(live_database, django_db_blocker):
    """Run ORM writes that are committed for real, so a live server process can see them.
    Use unique names (see `unique`): committed rows stay for the rest of the session."""

    class Committed:
        def __call__(self, fn, *args, **kwargs):
            with django_db_blocker.unblock():
                try:
                    return fn(*args, **kwargs)
                finally:
                    # A helper thread's connection would outlive the test and block teardown.
                    if threading.current_thread() is not threading.main_thread():
                        connection.close()

    return Committed()


@pytest.fixture
def unique():
    return uuid.uuid4().hex[:10]


@pytest.fixture(autouse=True)
def _fresh_throttles():
    """Login and reset counters live in Redis across tests; each test starts with none."""
    from accounts import throttle

    throttle.clear()
    yield


@pytest.fixture(scope="session")
def httpserver_listen_address():
    """pytest-httpserver's one server of the session listens on an address, not "localhost":
    the module that happens to start it first must not decide what every other module sees
    (the SSRF guard judges every address a name resolves to)."""
    return ("127.0.0.1", 0)
