"""A Redis and a Postgres cluster of the bench's own, so that their CPU is the bench's alone.

The machine's shared Redis (6379) and Postgres (5432) serve everybody on it: their processes'
CPU says nothing about one benchmark. The whole-system side (bench/system_side.py) starts these
instead, each on a spare loopback port with its files in a temporary directory, and reads their
processes' CPU from /proc (bench/process_cpu.py).

Redis runs as docker-compose.yml runs it (`--appendonly yes`, fsync every second); Postgres with
its defaults (fsync on), as a deployment would. Postgres refuses to run as root, so its commands
run as the `postgres` OS user when the bench runs as root.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pinned(cpu: str, command: list[str]) -> list[str]:
    """`command` under taskset on `cpu` ('' or no taskset: as it is)."""
    if cpu and shutil.which("taskset"):
        return ["taskset", "-c", cpu, *command]
    return command


def wait_for_port(port: int, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{what} did not listen on port {port} within {seconds:g}s")


class BenchRedis:
    """redis-server on a spare port, as docker-compose.yml configures it."""

    def __init__(self, cpu: str = ""):
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="getmcp-bench-redis-"))
        command = [
            shutil.which("redis-server") or "/usr/bin/redis-server",
            "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
            "--save", "", "--appendonly", "yes", "--daemonize", "no",
            "--logfile", str(self.dir / "redis.log"),
        ]  # fmt: skip
        self.process = subprocess.Popen(pinned(cpu, command), stdin=subprocess.DEVNULL)
        wait_for_port(self.port, 10, "the bench's Redis")

    @property
    def pid(self) -> int:
        return self.process.pid  # taskset execs redis-server: the same process

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def postgres_bin() -> Path:
    """The newest installed Postgres's binaries (BENCH_PG_BIN overrides)."""
    if os.environ.get("BENCH_PG_BIN"):
        return Path(os.environ["BENCH_PG_BIN"])
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    if not found:
        raise SystemExit("no initdb under /usr/lib/postgresql/*/bin (set BENCH_PG_BIN)")
    return Path(found[-1]).parent


class BenchPostgres:
    """A fresh cluster (initdb) started with pg_ctl on a spare port; `pid` is its postmaster,
    the parent of every backend and background process of the cluster."""

    def __init__(self, cpu: str = ""):
        self.bin = postgres_bin()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="getmcp-bench-pg-"))
        self.data = self.root / "data"
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root}"
        # pg_ctl under taskset: the postmaster, and so every process it forks, keeps the pinning.
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.root / "postgres.log"),
            "-o", options, "-w", "-t", "60", "start", cpu=cpu,
        )  # fmt: skip
        self.pid = int((self.data / "postmaster.pid").read_text().split()[0])

    def _run(self, program: str, *args: str, cpu: str = "") -> None:
        command = pinned(cpu, [str(self.bin / program), *args])
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, cwd=self.root)
        if result.returncode != 0:
            raise SystemExit(f"{program} failed:\n{result.stdout}\n{result.stderr}")

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return self.url(name)

    def close(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        except SystemExit:
            with_signal(self.pid, signal.SIGQUIT)
        shutil.rmtree(self.root, ignore_errors=True)


def with_signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)
