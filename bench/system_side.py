"""The whole-system side of the benchmark: getmcp as `make run` starts it, and the CPU of every
process the platform needs.

`scripts/run.py` (what `make run` runs) with REDIS_URL and DATABASE_URL set starts the web server
(uvicorn with getmcp's HTTP protocol and its access log, the defaults), a Celery worker and Celery
beat, which drains the call log from Redis into Postgres every few seconds. Here they run on a
Redis and a Postgres cluster of the bench's own (bench/private_services.py), so that the CPU of
those two is the bench's alone. The supervisor and everything under it, Redis and Postgres are
pinned to the server CPU like a peer's one process.

A round's CPU is read from just before wrk starts until every call of the round is stored in
Postgres (the worker has drained them): the cost of a call includes its logging, done later.

Sides (one platform serves the first three, on three servers):
- `system`: bench/getmcp_server.yaml (`auth: none`), as the `getmcp` side;
- `system-key`: bench/getmcp_auth_server.yaml with an API key, as `getmcp-key`;
- `system-quota`: bench/getmcp_quota_server.yaml, `auth: none` in an organization with a monthly
  call quota (bench/quota.py), so every call is charged in Redis;
- `system-http` and `system-connection` (issue 28): an http tool calling bench/upstream.py on
  loopback, which checks the bearer token; `system-http` sends a fixed token, `system-connection`
  the calling person's connected account (docs/connected-accounts.md), seeded fresh by
  bench/connection_seed.py. Both are called with that person's API key. The upstream runs on the
  load CPU and its CPU is reported apart (`upstream`), not in the platform's total;
- `system-baseline`: `system` on a second platform (its own Redis and Postgres) whose web,
  worker and beat run from another source tree (--baseline DIR), to compare a change in one run.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import getmcp_side
import process_cpu
from private_services import BenchPostgres, BenchRedis, free_port, pinned, wait_for_port

ROOT = getmcp_side.ROOT
SYSTEM_SIDES = (
    "system",
    "system-key",
    "system-quota",
    "system-http",
    "system-connection",
    "system-baseline",
)
# The sides of issue 28's pair: they need bench/upstream.py and the seeded connection.
CONNECTION_SIDES = ("system-http", "system-connection")
PATHS = {
    "system": getmcp_side.GETMCP_PATH,
    "system-baseline": getmcp_side.GETMCP_PATH,
    "system-key": getmcp_side.GETMCP_AUTH_PATH,
    "system-quota": "/mcp/bench-echo-quota",
    "system-http": "/mcp/bench-http",
    "system-connection": "/mcp/bench-connection",
}
QUOTA_OWNER = "bench-quota@example.com"
# The components a whole-system figure adds up, in the order the table shows them.
COMPONENTS = ("web", "worker", "beat", "supervisor", "redis", "postgres")
# How long the worker may take to store a round's calls after wrk stops.
SETTLE_SECONDS = 120.0


def supervised(children: dict[int, str]) -> dict[str, int]:
    """The supervisor's children by what they are (their command lines): the web server, the
    Celery worker and beat (scripts/run.py `commands()`)."""
    found = {}
    for pid, command in children.items():
        if "uvicorn" in command:
            found["web"] = pid
        elif " beat" in command:
            found["beat"] = pid
        elif " worker" in command:
            found["worker"] = pid
    return found


def children_of(pid: int) -> dict[int, str]:
    """pid -> command line of each live child of `pid`."""
    found = {}
    for info in process_cpu.table().values():
        if info.ppid == pid:
            try:
                raw = Path(f"/proc/{info.pid}/cmdline").read_bytes()
            except OSError:
                continue
            found[info.pid] = raw.replace(b"\0", b" ").decode(errors="replace")
    return found


class Platform:
    """Redis, Postgres and `scripts/run.py` on them, prepared with the bench's servers."""

    def __init__(
        self,
        env: dict,
        cpu: str,
        tree: Path = ROOT,
        name: str = "system",
        upstream_cpu: str | None = None,
    ):
        """`upstream_cpu`: start bench/upstream.py pinned there and seed the connected-accounts
        servers (None: not needed by the sides run)."""
        self.cpu, self.tree = cpu, tree
        self.upstream: subprocess.Popen | None = None
        self.redis = BenchRedis(cpu)
        self.postgres = BenchPostgres(cpu)
        self.port = free_port()
        self.log = ROOT / "results" / "bench" / f"{name}.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.supervisor: subprocess.Popen | None = None
        self.roots: dict[str, int] = {}
        self._stored = None
        try:
            self.env = self._prepare(env)
            if upstream_cpu is not None:
                self._connections(upstream_cpu)
            self._start()
        except BaseException:
            self.stop()
            raise

    def _prepare(self, env: dict) -> dict:
        database = self.postgres.create_database(getmcp_side.BENCH_DATABASE)
        env = env | {"REDIS_URL": self.redis.url(0)}
        env = getmcp_side.prepare_getmcp(env, database_url=database)
        manage = [getmcp_side.PYTHON, "manage.py"]
        password = {"GETMCP_PASSWORD": secrets.token_urlsafe(24)}
        getmcp_side.run([*manage, "createuser", QUOTA_OWNER], env | password)
        definition = str(getmcp_side.BENCH / "getmcp_quota_server.yaml")
        getmcp_side.run([*manage, "server", "import", definition, "--owner", QUOTA_OWNER], env)
        django = {"DJANGO_SETTINGS_MODULE": "getmcp.settings"}
        getmcp_side.run([getmcp_side.PYTHON, str(getmcp_side.BENCH / "quota.py")], env | django)
        # What the Makefile's `run` target exports (SITE_URL, ALLOWED_HOSTS); scripts/run.py
        # adds OUTBOUND_ALLOW_LOOPBACK for a loopback host itself.
        site = f"http://127.0.0.1:{self.port}"
        return env | {"SITE_URL": site, "ALLOWED_HOSTS": "localhost,127.0.0.1,[::1],127.0.0.1"}

    def _connections(self, cpu: str) -> None:
        """bench/upstream.py on a spare port, the two http servers pointing at it, and the
        owner's connection and person key (bench/connection_seed.py, the product's services)."""
        plain, connected = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        port = free_port()
        command = [getmcp_side.PYTHON, str(getmcp_side.BENCH / "upstream.py"), str(port)]
        self.upstream = subprocess.Popen(
            pinned(cpu, [*command, plain, connected]), stdin=subprocess.DEVNULL
        )
        wait_for_port(port, 30, "bench/upstream.py")
        upstream = f"http://127.0.0.1:{port}"
        manage = [getmcp_side.PYTHON, "manage.py"]
        with tempfile.TemporaryDirectory() as directory:
            for name in ("getmcp_http_server.yaml", "getmcp_connection_server.yaml"):
                text = (getmcp_side.BENCH / name).read_text()
                text = text.replace("UPSTREAM", upstream).replace("PLAIN_TOKEN", plain)
                definition = Path(directory) / name
                definition.write_text(text)
                getmcp_side.run(
                    [*manage, "server", "import", str(definition), "--owner", getmcp_side.OWNER],
                    self.env,
                )
        seeded = subprocess.run(
            [getmcp_side.PYTHON, str(getmcp_side.BENCH / "connection_seed.py")]
            + [upstream, connected],
            env=self.env | {"DJANGO_SETTINGS_MODULE": "getmcp.settings"},
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        getmcp_side.CREDENTIALS["person_key"] = json.loads(seeded.strip().splitlines()[-1])["key"]

    def upstream_seconds(self) -> float:
        if self.upstream is None:
            return 0.0
        return process_cpu.components_seconds({"upstream": self.upstream.pid})["upstream"]

    def _start(self) -> None:
        command = [getmcp_side.PYTHON, str(self.tree / "scripts" / "run.py"), "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--workers", "1"]
        with self.log.open("w") as log:
            self.supervisor = subprocess.Popen(
                pinned(self.cpu, command),
                cwd=self.tree,
                env=self.env | {"PYTHONPATH": str(self.tree)},
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        wait_for_port(self.port, 60, f"the web server (see {self.log})")
        deadline = time.monotonic() + 30
        while True:
            found = supervised(children_of(self.supervisor.pid))
            if set(found) == {"web", "worker", "beat"}:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"scripts/run.py started {sorted(found)} only; see {self.log}")
            time.sleep(0.2)
        self.roots = found | {
            "supervisor": self.supervisor.pid,
            "redis": self.redis.pid,
            "postgres": self.postgres.pid,
        }

    def url(self, side: str) -> str:
        return f"http://127.0.0.1:{self.port}{PATHS[side]}"

    def cpu_seconds(self) -> dict[str, float]:
        """CPU seconds so far of each component (each one's whole process tree)."""
        return process_cpu.components_seconds(self.roots)

    def stored_calls(self) -> int:
        """Rows of the call log stored in Postgres, through one connection kept open (a new
        connection per look would start a Postgres backend each time, CPU the bench counts)."""
        import psycopg

        if self._stored is None:
            self._stored = psycopg.connect(self.env["DATABASE_URL"], autocommit=True)
        return self._stored.execute("SELECT count(*) FROM activity_calllog").fetchone()[0]

    def drained(self, seconds: float = SETTLE_SECONDS) -> None:
        """Waits until nothing of earlier calls is left to store: the web process has pushed
        its buffer (once a second) and the worker has emptied the stream, so a round's window
        holds none of the work of the calls before it (the warm-up's, another side's)."""
        import redis

        from infra.keys import CALL_LOG_STREAM

        time.sleep(1.5)
        client = redis.Redis.from_url(self.redis.url(0))
        try:
            deadline = time.monotonic() + seconds
            while client.xlen(CALL_LOG_STREAM):
                if time.monotonic() > deadline:
                    raise SystemExit(f"the call log was not drained within {seconds:g}s")
                time.sleep(0.25)
        finally:
            client.close()

    def redis_commands(self) -> int:
        """Commands the bench's Redis has run so far (INFO commandstats, the INFO included)."""
        import redis

        client = redis.Redis.from_url(self.redis.url(0))
        try:
            stats = client.info("commandstats")
        finally:
            client.close()
        return sum(int(entry["calls"]) for entry in stats.values())

    def settle(self, expected: int, seconds: float = SETTLE_SECONDS) -> float:
        """Waits until `expected` calls are stored in Postgres; returns how long that took."""
        started = time.monotonic()
        while self.stored_calls() < expected:
            if time.monotonic() - started > seconds:
                raise SystemExit(
                    f"the call log stored {self.stored_calls()} of {expected} calls within "
                    f"{seconds:g}s of the round's end: the worker does not keep up"
                )
            time.sleep(0.25)
        return time.monotonic() - started

    def stop(self) -> None:
        if self._stored is not None:
            self._stored.close()
        if self.supervisor is not None and self.supervisor.poll() is None:
            self.supervisor.send_signal(signal.SIGTERM)  # it stops web, worker and beat in order
            try:
                self.supervisor.wait(40)
            except subprocess.TimeoutExpired:
                for pid in {self.supervisor.pid, *self.roots.values()} - {
                    self.redis.pid,
                    self.postgres.pid,
                }:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pid, signal.SIGKILL)
                self.supervisor.wait()
        if self.upstream is not None and self.upstream.poll() is None:
            self.upstream.terminate()
            self.upstream.wait(10)
        self.postgres.close()
        self.redis.close()


class PlatformSide:
    """One whole-system side: a server of the shared Platform, measured as bench/run.py measures
    a peer's process (the same `cpu()` and round hooks as run.Server)."""

    def __init__(self, name: str, platform: Platform):
        self.name, self.platform = name, platform
        self.url = platform.url(name)
        self.env = platform.env
        self._stored_before = 0
        self._commands_before = 0
        self._upstream_before = 0.0

    def wait(self) -> None:
        """The platform waited for its web server when it started."""

    def cpu(self) -> dict[str, float]:
        return self.platform.cpu_seconds()

    def before_round(self) -> None:
        self.platform.drained()
        self._stored_before = self.platform.stored_calls()
        self._commands_before = self.platform.redis_commands()
        self._upstream_before = self.platform.upstream_seconds()

    def after_round(self, requests: int) -> dict[str, float]:
        """Seconds the worker took, after wrk stopped, to store the round's calls, and the
        Redis commands per call from the round's start until then."""
        settle = self.platform.settle(self._stored_before + requests)
        commands = self.platform.redis_commands() - self._commands_before
        upstream = self.platform.upstream_seconds() - self._upstream_before
        per_call = 1 / requests if requests else 0.0
        return {
            "settle_s": settle,
            "redis_per_call": commands * per_call,
            "upstream_ms_per_call": upstream * 1000 * per_call,
        }

    def stop(self) -> None:
        """The platform stops once, after every side (bench/run.py)."""
