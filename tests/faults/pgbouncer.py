"""A private PgBouncer (Debian's package) in front of a private Postgres, for the tests that run
the platform through a pooler. Started as the postgres user: PgBouncer refuses to run as root."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.faults.harness import _port_open
from tests.servers.upstream.fixtures import free_port
from tests.waiting import wait_until

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


class PrivatePgBouncer:
    def __init__(self, *, target_port: int, pool_mode: str = "transaction", pool_size: int = 2):
        self.port = free_port()
        self.target_port = target_port
        self.root = Path(tempfile.mkdtemp(prefix="faults-pgbouncer-"))
        self.config = self.root / "pgbouncer.ini"
        self.log = self.root / "pgbouncer.log"
        (self.root / "users.txt").write_text('"postgres" ""\n')
        self.config.write_text(
            "[databases]\n"
            f"* = host=127.0.0.1 port={target_port}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\n"
            f"unix_socket_dir = {self.root}\n"
            "auth_type = trust\n"
            f"auth_file = {self.root / 'users.txt'}\n"
            "admin_users = postgres\n"
            f"pool_mode = {pool_mode}\n"
            f"default_pool_size = {pool_size}\nmax_client_conn = 200\n"
            f"logfile = {self.log}\npidfile = {self.root / 'pgbouncer.pid'}\n"
        )
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
            for path in self.root.iterdir():
                shutil.chown(path, "postgres", "postgres")
        self.process: subprocess.Popen | None = None

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> PrivatePgBouncer:
        command = [PGBOUNCER, str(self.config)]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        self.process = subprocess.Popen(
            command, cwd=self.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

        def started() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"pgbouncer exited:\n{self.log_text()}")
            return _port_open(self.port)

        try:
            wait_until(started, timeout=20, interval=0.05, what="pgbouncer to listen")
        except AssertionError as failed:
            raise AssertionError(f"{failed}:\n{self.log_text()}") from None
        return self

    def show(self, what: str) -> list[list[str]]:
        """A row per line of the admin console's SHOW <what> (psql, unaligned, no headers)."""
        result = subprocess.run(
            ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d",
             "pgbouncer", "-At", "-F", "\t", "-c", f"SHOW {what}"],
            capture_output=True, text=True, timeout=20,
        )  # fmt: skip
        if result.returncode:
            raise AssertionError(result.stderr)
        return [line.split("\t") for line in result.stdout.splitlines() if line]

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        shutil.rmtree(self.root, ignore_errors=True)
