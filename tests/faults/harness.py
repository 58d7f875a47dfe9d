"""Fault-injection harness: private Redis and Postgres instances a test may break at will.

The shared Postgres (5432) and Redis (6379) serve every engineer and CI job on the machine, so a
fault is never injected there. Instead a test starts its own services on spare loopback ports,
points a live uvicorn process (and, if it needs one, a Celery worker) at them, and then stops,
kills, freezes or restarts them:

    redis = PrivateRedis(appendonly=True).start()   # data survives kill() and restart()
    redis.freeze(); redis.thaw()                    # SIGSTOP / SIGCONT: a hung Redis
    redis.kill(); redis.start()                     # kill -9, then back with its append-only data

    pg = PrivatePostgres().start()                  # initdb + pg_ctl in a temp dir
    url = pg.create_database("app")                 # `manage.py migrate` already applied
    pg.stop(mode="immediate"); pg.start()           # a crash and a recovery

    server = live_server(database_url=url, redis_url=redis.url(0))
    worker = celery_worker(database_url=url, redis_url=redis.url(0))
    django_script("print(...)", database_url=url, redis_url=redis.url(0))  # seed / inspect data

Everything lives in a temporary directory removed on `close()`; the fixtures in
`tests/faults/conftest.py` wrap these classes so a test only asks for `fault_redis`,
`fault_postgres` and so on. Postgres refuses to run as root, so its commands run as the
`postgres` OS user when the tests run as root.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx2

from tests.conftest import LiveServer, free_port
from tests.waiting import wait_until  # noqa: F401 (the fault tests import it from here)

# The status of an API key that is no longer usable (revoked, expired, suspended): 403, never an
# OAuth 401 challenge for a key (gateway.endpoint.gate.bad_api_key).
REVOKED_KEY = 403

ROOT = Path(__file__).resolve().parents[2]
PG_BIN = Path(os.environ.get("FAULTS_PG_BIN", "/usr/lib/postgresql/15/bin"))
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _port_open(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class PrivateRedis:
    """A `redis-server` child process on a spare port, its files in a private temp dir.

    `appendonly=True` writes every command to an append-only file (fsync always), so a kill -9
    followed by `start()` brings Redis back with the data it had: the "Redis returns with old
    data" case. Without it, a restart comes back empty.
    """

    def __init__(self, *, appendonly: bool = False, port: int | None = None):
        self.appendonly = appendonly
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="faults-redis-"))
        self.process: subprocess.Popen | None = None
        self._frozen = False

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> PrivateRedis:
        args = [
            REDIS_SERVER,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.dir),
            "--save",
            "",
            "--daemonize",
            "no",
            "--logfile",
            str(self.dir / "redis.log"),
        ]
        if self.appendonly:
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._frozen = False
        wait_until(self.ping, timeout=10, what=f"redis on port {self.port}")
        return self

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_timeout=0.5).ping())
        except redis.RedisError:
            return False

    def client(self, db: int = 0):
        import redis

        return redis.Redis.from_url(self.url(db), socket_timeout=2)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """A clean shutdown (SIGTERM): an append-only Redis keeps everything it acknowledged."""
        if self.running:
            self.thaw()
            self.process.terminate()
            self.process.wait(10)

    def kill(self) -> None:
        """kill -9: only the append-only file (if any) survives."""
        if self.running:
            self.process.kill()
            self.process.wait(10)
        self._frozen = False

    def freeze(self) -> None:
        """SIGSTOP: the port still accepts TCP connections but nothing is ever answered."""
        if self.running and not self._frozen:
            self.process.send_signal(signal.SIGSTOP)
            self._frozen = True

    def thaw(self) -> None:
        if self.running and self._frozen:
            self.process.send_signal(signal.SIGCONT)
            self._frozen = False

    def restart(self) -> PrivateRedis:
        self.stop()
        return self.start()

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivatePostgres:
    """A throw-away Postgres 15 cluster (initdb + pg_ctl) on a spare port.

    fsync is off because the machine itself never crashes under a test (the OS keeps what was
    written); synchronous_commit stays on, so a commit acknowledged before a crash is kept.
    `stop(mode="immediate")` is a real crash for the server's clients: every connection is
    cut and the next start runs crash recovery.
    """

    def __init__(self, *, port: int | None = None):
        self.port = port or free_port()
        self.root = Path(tempfile.mkdtemp(prefix="faults-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._initialised = False

    def _run(
        self, *args: str, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess:
        command = list(args)
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, cwd=self.root
        )
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
        return result

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> PrivatePostgres:
        if not self._initialised:
            self._run(
                str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                "--no-sync", "-E", "UTF8",
            )  # fmt: skip
            self._initialised = True
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} "
            "-c fsync=off -c full_page_writes=off"
        )
        self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options,
            "-w", "-t", "60", "start",
        )  # fmt: skip
        return self

    def stop(self, *, mode: str = "fast") -> None:
        """`mode="immediate"` is a crash: no checkpoint, every client connection dropped."""
        self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False
        )

    def restart(self, *, mode: str = "immediate") -> PrivatePostgres:
        self.stop(mode=mode)
        return self.start()

    @property
    def running(self) -> bool:
        result = self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "status", check=False)
        return result.returncode == 0

    def accepts_connections(self) -> bool:
        return (
            _port_open(self.port)
            and self._run(
                str(PG_BIN / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), check=False
            ).returncode
            == 0
        )

    def psql(self, sql: str, database: str = "postgres") -> str:
        result = self._run(
            str(PG_BIN / "psql"),
            "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database,
            "-v", "ON_ERROR_STOP=1", "-At", "-c", sql,
        )  # fmt: skip
        return result.stdout.strip()

    def create_database(
        self, name: str, *, migrate: bool = True, template: str | None = None
    ) -> str:
        """Create `name` (optionally from a migrated template) and return its URL."""
        # FILE_COPY, not Postgres 15's default WAL_LOG: a sequence page copied by WAL_LOG keeps
        # the template's "values already logged" count, so its next values are never WAL-logged
        # and a crash (stop -m immediate) hands out the same ids again. FILE_COPY checkpoints
        # after the copy, which makes the first nextval log.
        clause = f' TEMPLATE "{template}" STRATEGY FILE_COPY' if template else ""
        self.psql(f'CREATE DATABASE "{name}"{clause}')
        url = self.url(name)
        if migrate and not template:
            run_manage("migrate", "--noinput", database_url=url, redis_url="")
        return url

    def close(self) -> None:
        self.stop(mode="immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def _env(database_url: str, redis_url: str, extra: dict | None = None) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "DJANGO_SETTINGS_MODULE": "getmcp.settings",
        **(extra or {}),
    }
    # The pytest run's TEST_DB_NAME only concerns the test process's own database.
    env.pop("TEST_DB_NAME", None)
    return env


def run_manage(
    *args: str, database_url: str, redis_url: str, timeout: float = 180, extra_env=None
) -> str:
    """Run a `manage.py` command against the private services; its stdout is returned."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(database_url, redis_url, extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
        )
    return result.stdout


def django_script(
    code: str, *, database_url: str, redis_url: str, timeout: float = 60, extra_env=None
):
    """Run Python `code` in a fresh Django process against the private services.

    The code assigns its answer to `result`; it comes back through JSON. This is how a test seeds
    or inspects the private database: the test process's own ORM stays on the shared test DB.
    """
    program = (
        "import django, json, sys\n"
        "django.setup()\n"
        "result = None\n" + code + "\n"
        "sys.stdout.write('\\n@@RESULT@@' + json.dumps(result, default=str))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        env=_env(database_url, redis_url, extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if completed.returncode != 0 or "@@RESULT@@" not in completed.stdout:
        raise AssertionError(f"django_script failed:\n{completed.stdout}\n{completed.stderr}")
    return json.loads(completed.stdout.rsplit("@@RESULT@@", 1)[1])


class FaultLiveServer(LiveServer):
    """tests.conftest.LiveServer on the private services (any extra env on top)."""

    def __init__(self, *, database_url: str, redis_url: str, extra_env: dict | None = None):
        super().__init__(
            "unused",
            extra_env={"DATABASE_URL": database_url, "REDIS_URL": redis_url, **(extra_env or {})},
        )

    def stop(self):
        """SIGTERM, then SIGKILL after 3 s: a test that broke a backing service may leave a
        request hanging, and uvicorn's graceful shutdown would wait for it."""
        self.process.terminate()
        try:
            self.process.wait(3)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self._log.close()

    def alive(self) -> bool:
        try:
            httpx2.get(self.url + "/mcp/-", timeout=1)
            return True
        except httpx2.HTTPError:
            return False

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")


def celery_worker(*, database_url: str, redis_url: str, log_dir: Path, **options):
    """A real `celery worker` (tests/celery_workers.Worker, `options` passed on) on the private
    services, started and ready; the caller stops it."""
    from tests.celery_workers import Worker

    return Worker(database_url, log_dir, redis_url=redis_url, **options).wait_ready()


SEED_TENANT = """
import uuid
from accounts.models import ApiKey, User
from api.models import PersonalAccessToken
from servers.definition import import_definition

tag = uuid.uuid4().hex[:8]
user = User.objects.create_user(f"owner-{tag}@example.com", "long enough password 1")
org = user.personal_organization()
server = import_definition({
    "slug": f"f-{tag}", "name": f"faults {tag}", "version": "1.0.0", "auth": "api_key",
    "status": "active",
    "tools": [{
        "name": "echo", "description": "Echo a message back.",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
        "kind": "static",
        "config": {"content": [{"type": "text", "text": "You said {{ message }}"}]},
    }],
}, org)
key, raw = ApiKey.issue(org, "faults key")
token, raw_token = PersonalAccessToken.issue(user, "faults token")
# Keys no request has used yet: their first use must read Postgres (a cold call).
spare = [ApiKey.issue(org, f"spare {i}")[1] for i in range(3)]
result = {"slug": server.slug, "server_id": server.pk, "key_id": key.pk, "key": raw,
          "token": raw_token, "email": user.email, "org_id": org.pk, "spare_keys": spare}
"""


def seed_tenant(*, database_url: str, redis_url: str) -> dict:
    """A user with a server (one `echo` tool, API-key auth), an MCP key, three unused spare
    keys and an API token; the answer holds the raw secrets."""
    return django_script(SEED_TENANT, database_url=database_url, redis_url=redis_url)


def seed_tenants(count: int, *, database_url: str, redis_url: str) -> list[dict]:
    """`count` tenants as `seed_tenant` makes them, in one process."""
    body = "\n".join("    " + line for line in SEED_TENANT.strip().splitlines())
    code = f"def seed():\n{body}\n    return result\n\nresult = [seed() for _ in range({count})]"
    # A password hash per tenant: on a loaded machine 20 of them take well over a minute.
    return django_script(code, database_url=database_url, redis_url=redis_url, timeout=300)


MODERN = "2026-07-28"


def mcp_call(
    server_url: str, slug: str, key: str, *, method: str = "tools/call", params=None,
    timeout: float = 10.0,
) -> httpx2.Response:  # fmt: skip
    """One stateless (2026-07-28) request: no session needed, so every call authenticates, loads
    the server and answers on its own. Defaults to `tools/call echo`."""
    if params is None and method == "tools/call":
        params = {"name": "echo", "arguments": {"message": "hi"}}
    params = dict(params or {})
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "faults", "version": "0"},
    }
    headers = {
        "authorization": f"Bearer {key}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    if isinstance(params.get("name"), str):
        headers["mcp-name"] = params["name"]
    return httpx2.post(
        f"{server_url}/mcp/{slug}",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers=headers,
        timeout=timeout,
    )


def answer_of(response: httpx2.Response) -> dict:
    """The JSON-RPC message of a response, whether sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()
