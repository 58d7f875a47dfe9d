"""The services of the multi-host topology, each started inside its host's namespace and bound
to that host's address: Postgres, PgBouncer, Redis (cluster nodes and the standalone broker),
getmcp's web processes, haproxy, and a Celery worker with beat.

Each service is a supervised child: `start()` waits until it answers, `stop()`/`kill()` end it,
and its log is a file under the run's directory (printed by a failing wait)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx2

from scripts import balancer
from tests.multihost.network import Host
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
PG_BIN = Path(os.environ.get("FAULTS_PG_BIN", "/usr/lib/postgresql/15/bin"))
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


def answers_tcp(address: str, port: int, timeout: float = 0.3) -> bool:
    with socket.socket() as sock:
        sock.settimeout(timeout)
        return sock.connect_ex((address, port)) == 0


def tail(path: Path, lines: int = 40) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


class Service:
    """A process on a host, its log in `dir`."""

    name = "service"

    def __init__(self, host: Host, port: int, directory: Path):
        self.host = host
        self.port = port
        self.dir = directory / f"{self.name}-{host.name}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log = self.dir / f"{self.name}.log"
        self.process: subprocess.Popen | None = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait_answering(self, check, timeout: float = 60) -> None:
        def ready() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"{self.name} on {self.host.name} exited:\n{tail(self.log)}")
            return check()

        try:
            wait_until(ready, timeout=timeout, interval=0.1, what=f"{self.name} to answer")
        except AssertionError as failed:
            raise AssertionError(f"{failed}\n{tail(self.log)}") from None

    def stop(self, timeout: float = 10) -> None:
        if self.running:
            assert self.process is not None
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def kill(self) -> None:
        if self.running:
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)


class Postgres(Service):
    """A Postgres cluster of its own (initdb) on the database host: the machine's Postgres
    listens on loopback only, which another host cannot reach."""

    name = "postgres"

    def __init__(self, host: Host, port: int, directory: Path):
        super().__init__(host, port, directory)
        self.data = self.dir / "data"
        shutil.chown(self.dir, "postgres", "postgres")

    def start(self) -> Postgres:
        as_postgres = {"user": "postgres"}
        if not self.data.exists():
            self.host.run(
                [str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                 "--no-sync", "-E", "UTF8"], **as_postgres,
            )  # fmt: skip
            with open(self.data / "pg_hba.conf", "a") as hba:
                hba.write("host all all 10.77.0.0/16 trust\n")
        options = (
            f"-p {self.port} -c listen_addresses={self.host.address} -k {self.dir} "
            "-c fsync=off -c full_page_writes=off -c max_connections=200"
        )
        self.host.run(
            [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options,
             "-w", "-t", "60", "start"], **as_postgres,
        )  # fmt: skip
        return self

    def stop(self, timeout: float = 10) -> None:
        if self.data.exists():
            subprocess.run(
                ["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(self.data),
                 "-m", "immediate", "-w", "stop"], capture_output=True, timeout=60,
            )  # fmt: skip

    def create_database(self, name: str) -> None:
        self.host.run(
            [str(PG_BIN / "psql"), "-h", self.host.address, "-p", str(self.port), "-U",
             "postgres", "-v", "ON_ERROR_STOP=1", "-c", f'CREATE DATABASE "{name}"'],
            user="postgres",
        )  # fmt: skip


class PgBouncer(Service):
    """PgBouncer in transaction mode on its own host, in front of the database host."""

    name = "pgbouncer"

    def __init__(self, host: Host, port: int, directory: Path, *, target: Postgres):
        super().__init__(host, port, directory)
        config = self.dir / "pgbouncer.ini"
        (self.dir / "users.txt").write_text('"postgres" ""\n')
        config.write_text(
            "[databases]\n"
            f"* = host={target.host.address} port={target.port}\n"
            "[pgbouncer]\n"
            f"listen_addr = {host.address}\nlisten_port = {port}\n"
            f"unix_socket_dir = {self.dir}\n"
            "auth_type = trust\n"
            f"auth_file = {self.dir / 'users.txt'}\n"
            "admin_users = postgres\npool_mode = transaction\n"
            "default_pool_size = 20\nmax_client_conn = 500\n"
            f"logfile = {self.log}\npidfile = {self.dir / 'pgbouncer.pid'}\n"
        )
        for path in (self.dir, *self.dir.iterdir()):
            shutil.chown(path, "postgres", "postgres")
        self.config = config

    def url(self, database: str) -> str:
        return f"postgres://postgres@{self.host.address}:{self.port}/{database}"

    def start(self) -> PgBouncer:
        (self.dir / "pgbouncer.pid").unlink(missing_ok=True)
        self.process = self.host.popen([PGBOUNCER, str(self.config)], log=self.dir / "out.log",
                                       user="postgres", cwd=self.dir)  # fmt: skip
        self.wait_answering(lambda: answers_tcp(self.host.address, self.port), timeout=20)
        return self


class Redis(Service):
    """redis-server on a host's address; a cluster node when `cluster` (the bus on port+10000),
    else the standalone Redis of the broker and the Channels layer (append-only, so a restart
    keeps the queued messages)."""

    name = "redis"

    def __init__(self, host: Host, port: int, directory: Path, *, cluster: bool):
        super().__init__(host, port, directory)
        self.cluster = cluster

    @property
    def address(self) -> str:
        return f"{self.host.address}:{self.port}"

    def start(self) -> Redis:
        argv = [REDIS_SERVER, "--port", str(self.port), "--bind", self.host.address,
                "--protected-mode", "no", "--dir", str(self.dir), "--save", "",
                "--appendonly", "yes", "--appendfsync", "always",
                "--logfile", str(self.log)]  # fmt: skip
        if self.cluster:
            argv += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                     "--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0"]  # fmt: skip
        self.process = self.host.popen(argv, log=self.dir / "out.log")
        self.wait_answering(self.ping, timeout=20)
        return self

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(self.host.address, self.port, socket_timeout=0.5).ping())
        except redis.RedisError:
            return False


def create_cluster(nodes: list[Redis], replicas: int) -> None:
    subprocess.run(
        [REDIS_CLI, "--cluster", "create", *(node.address for node in nodes),
         "--cluster-replicas", str(replicas), "--cluster-yes"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip

    def healthy() -> bool:
        import redis

        for node in nodes:
            try:
                client = redis.Redis(node.host.address, node.port, socket_timeout=1)
                info = client.execute_command("CLUSTER", "INFO").decode()
            except redis.RedisError:
                return False
            if "cluster_state:ok" not in info:
                return False
        return True

    wait_until(healthy, timeout=30, interval=0.2, what="the Redis Cluster to be ok")


class Web(Service):
    """A getmcp web process (uvicorn with getmcp's HTTP protocol), as LiveServer starts one."""

    name = "web"

    def __init__(self, host: Host, port: int, directory: Path, *, env: dict):
        super().__init__(host, port, directory)
        self.env = env
        self.url = f"http://{host.address}:{port}"

    def start(self) -> Web:
        self.launch()
        self.ready()
        return self

    def ready(self) -> None:
        self.wait_answering(self.answers, timeout=120)

    def launch(self) -> None:
        argv = [sys.executable, "-m", "uvicorn", "getmcp.asgi:application", "--http",
                "getmcp.http_protocol:HttpProtocol", "--host", self.host.address,
                "--port", str(self.port), "--log-level", "warning"]  # fmt: skip
        self.process = self.host.popen(argv, log=self.log, env=self.env, cwd=ROOT)

    def answers(self) -> bool:
        try:
            httpx2.get(self.url + "/mcp/-", timeout=1)
            return True
        except httpx2.HTTPError:
            return False


class Balancer(Service):
    """haproxy (scripts/balancer.py's configuration) on the balancer host, with an admin socket
    the test reads (a Unix socket: a file, reachable from the root namespace)."""

    name = "haproxy"

    def __init__(self, host: Host, port: int, directory: Path, *, backends: list[Web]):
        super().__init__(host, port, directory)
        self.backends = backends
        self.url = f"http://{host.address}:{port}"
        self.socket_path = str(self.dir / "admin.sock")
        self.config = self.dir / "haproxy.cfg"
        text = balancer.config(
            port=port,
            host=host.address,
            backends=[f"{web.host.address}:{web.port}" for web in backends],
            stats_socket=self.socket_path,
        )
        # Also on the balancer host's own loopback, for a client on that host (the conformance
        # suite's DNS-rebinding scenario only runs against a localhost URL).
        bind = f"    bind {host.address}:{port}\n"
        self.config.write_text(text.replace(bind, bind + f"    bind 127.0.0.1:{port}\n"))

    def start(self) -> Balancer:
        self.process = self.host.popen(balancer.command(self.config), log=self.log)
        self.wait_answering(lambda: answers_tcp(self.host.address, self.port), timeout=20)
        return self

    def admin(self, command: str) -> str:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(self.socket_path)
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def _rows(self) -> list[dict]:
        rows = self.admin("show stat").splitlines()
        header = rows[0].lstrip("# ").split(",")
        return [dict(zip(header, row.split(","), strict=False)) for row in rows[1:] if row]

    def status(self) -> dict[str, str]:
        """Each web backend's health as haproxy sees it (UP, DOWN, ...)."""
        return {
            row["svname"]: row["status"]
            for row in self._rows()
            if row.get("pxname") == "web" and row.get("svname", "").startswith("web")
        }

    def connections_per_process(self) -> dict[str, int]:
        return {
            row["svname"]: int(row["stot"])
            for row in self._rows()
            if row.get("pxname") == "web" and row.get("svname", "").startswith("web")
        }

    def open_connections(self) -> dict[str, str]:
        """Each connection open through the balancer right now -> the backend it is on."""
        found = {}
        for line in self.admin("show sess").splitlines():
            parts = line.split()
            backend = next((p for p in parts if p.startswith("srv=web")), None)
            if parts and backend:
                found[parts[0]] = backend.removeprefix("srv=")
        return found

    def backend(self, name: str) -> Web:
        return self.backends[int(name.removeprefix("web")) - 1]


class Celery(Service):
    """`celery worker` (prefork, as production runs it) or `celery beat` on the worker host."""

    def __init__(self, host: Host, directory: Path, *, env: dict, beat: bool = False):
        self.name = "beat" if beat else "worker"
        super().__init__(host, 0, directory)
        self.env = env
        self.beat = beat

    def start(self) -> Celery:
        self.launch()
        self.ready()
        return self

    def ready(self) -> None:
        ready = "beat: Starting" if self.beat else " ready."
        self.wait_answering(lambda: ready in self.log.read_text(errors="replace"), timeout=120)

    def launch(self) -> None:
        argv = [sys.executable, "-m", "celery", "-A", "getmcp.celery"]
        if self.beat:
            argv += ["beat", "--loglevel=INFO", f"--schedule={self.dir / 'schedule'}"]
        else:
            argv += ["worker", "--pool=prefork", "-c2", "-Q", "platform,mcp", "--loglevel=INFO",
                     "--without-gossip", "--without-mingle", "-n", f"{self.host.name}@%h"]  # fmt: skip
        self.process = self.host.popen(argv, log=self.log, env=self.env, cwd=ROOT)
