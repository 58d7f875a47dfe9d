"""A real Sentinel-watched Redis for tests: one master, one replica and three Sentinels,
`redis-server` children on free loopback ports, their files in a private temp dir (never the
machine's Redis).

`down-after-milliseconds` is short (`DOWN_AFTER_MS`) so a killed master is replaced within a
couple of seconds, which is what the failover test measures; a test may choose its own
(`down_after_ms`), as a production Sentinel's longer window. `REDIS_SENTINEL_PORTS` (a range,
`23000-23999`) keeps the ports inside a range of one's own on a shared machine."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis

from tests.scale.redis_cluster import RedisProcess
from tests.waiting import wait_until

MASTER_NAME = "getmcp"
DOWN_AFTER_MS = 1000
QUORUM = 2
# Plain imports only (no Django): `python -m tests.scale.redis_sentinel` runs without settings.
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int) -> list[int]:
    low, _, high = os.environ.get("REDIS_SENTINEL_PORTS", "").partition("-")
    if not low:
        found: list[int] = []
        while len(found) < count:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            if port not in found:
                found.append(port)
        return found
    found = [port for port in range(int(low), int(high) + 1) if _free(port)][:count]
    assert len(found) == count, f"not {count} free ports in {low}-{high}"
    return found


class Process(RedisProcess):
    def __init__(self, directory: Path, port: int, arguments: list[str]):
        self.port = port
        self.dir = directory
        self.arguments = arguments
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [REDIS_SERVER, *self.arguments],
            cwd=self.dir,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def _data_node(directory: Path, port: int, replica_of: int | None, appendfsync: str) -> Process:
    home = directory / f"redis-{port}"
    home.mkdir()
    arguments = [
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(home),
        "--appendonly",
        "yes",
        "--appendfsync",
        appendfsync,
        "--save",
        "",
        "--logfile",
        str(home / "redis.log"),
    ]
    if replica_of is not None:
        arguments += ["--replicaof", "127.0.0.1", str(replica_of)]
    return Process(home, port, arguments)


def _sentinel(directory: Path, port: int, master_port: int, down_after_ms: int) -> Process:
    home = directory / f"sentinel-{port}"
    home.mkdir()
    # A Sentinel rewrites its file (what it learnt of replicas, peers and epochs).
    (home / "sentinel.conf").write_text(
        f"port {port}\n"
        "bind 127.0.0.1\n"
        f"dir {home}\n"
        f"logfile {home / 'sentinel.log'}\n"
        f"sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} {QUORUM}\n"
        f"sentinel down-after-milliseconds {MASTER_NAME} {down_after_ms}\n"
        f"sentinel failover-timeout {MASTER_NAME} 10000\n"
        f"sentinel parallel-syncs {MASTER_NAME} 1\n"
    )
    return Process(home, port, [str(home / "sentinel.conf"), "--sentinel"])


class RedisSentinelForTests:
    def __init__(
        self,
        replicas: int = 1,
        sentinels: int = 3,
        appendfsync: str = "always",
        down_after_ms: int = DOWN_AFTER_MS,
    ):
        """`appendfsync` "always" for the failover tests (an acknowledged write is on disk);
        benches take docker-compose.yml's "everysec"."""
        self.down_after_ms = down_after_ms
        self.dir = Path(tempfile.mkdtemp(prefix="redis-sentinel-"))
        ports = free_ports(1 + replicas + sentinels)
        master_port = ports[0]
        self.data = [_data_node(self.dir, master_port, None, appendfsync)] + [
            _data_node(self.dir, port, master_port, appendfsync) for port in ports[1 : 1 + replicas]
        ]
        self.sentinels = [
            _sentinel(self.dir, port, master_port, down_after_ms) for port in ports[1 + replicas :]
        ]

    def url(self, db: int = 0) -> str:
        """Every Sentinel, in the broker's `sentinel://` form (infra/redis_sentinel.py)."""
        return ";".join(f"sentinel://127.0.0.1:{s.port}" for s in self.sentinels) + f"/{db}"

    def env(self, db: int = 0) -> dict[str, str]:
        return {"REDIS_URL": self.url(db), "REDIS_SENTINEL_MASTER": MASTER_NAME}

    def start(self) -> "RedisSentinelForTests":
        try:
            return self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> "RedisSentinelForTests":
        for node in self.data:
            node.start()
        for node in self.data:
            wait_until(node.ping, timeout=15, what=f"redis on port {node.port}")
        # Replicas attached before the Sentinels start are in the master's first INFO to them
        # (else they learn of them up to 10 s later: see `healthy`).
        wait_until(self._replicas_attached, timeout=15, interval=0.1, what="the replicas")
        for sentinel in self.sentinels:
            sentinel.start()
        wait_until(self.healthy, timeout=30, interval=0.2, what="the Sentinels to agree")
        return self

    def _replicas_attached(self) -> bool:
        try:
            role = self.data[0].client().execute_command("ROLE")
        except redis.RedisError:
            return False
        return len(role[2]) >= len(self.data) - 1

    def master_address(self) -> tuple[str, int] | None:
        """Where the Sentinels (a quorum of the live ones) say the master is."""
        answers = []
        for sentinel in self.sentinels:
            if not sentinel.running:
                continue
            try:
                found = sentinel.client().execute_command(
                    "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME
                )
            except redis.RedisError:
                continue
            if found:
                answers.append((found[0].decode(), int(found[1])))
        agreed = [a for a in set(answers) if answers.count(a) >= QUORUM]
        return agreed[0] if agreed else None

    def master(self) -> Process:
        address = self.master_address()
        assert address is not None, "the Sentinels name no master"
        return next(node for node in self.data if node.port == address[1])

    def healthy(self) -> bool:
        """The Sentinels agree on a live master that is one, has its replicas in sync, and each
        Sentinel knows the others and the replicas. A Sentinel learns of replicas from the
        master's INFO, every 10 s: one that has not yet finds no replica to promote when the
        master dies, and tries again only after twice its failover-timeout."""
        address = self.master_address()
        if address is None:
            return False
        master = next((node for node in self.data if node.port == address[1]), None)
        if master is None or not master.running:
            return False
        try:
            role = master.client().execute_command("ROLE")
            states = [s.client().sentinel_master(MASTER_NAME) for s in self.sentinels]
        except redis.RedisError:
            return False
        live_replicas = sum(1 for node in self.data if node.running) - 1
        return (
            role[0] == b"master"
            and len(role[2]) >= live_replicas
            and all(
                int(state["num-other-sentinels"]) >= len(self.sentinels) - 1 for state in states
            )
            and all(int(state["num-slaves"]) >= live_replicas for state in states)
        )

    def kill_master_and_wait_for_promotion(self) -> float:
        """SIGKILL the master; returns the seconds until the Sentinels name a replica as the
        master and that replica answers as one."""
        started = time.monotonic()
        self.wait_for_promotion(self.kill_master())
        return time.monotonic() - started

    def kill_master(self) -> Process:
        """SIGKILL the master; returns it (for `wait_for_promotion`)."""
        old = self.master()
        old.kill()
        return old

    def wait_for_promotion(self, old: Process) -> None:
        """Until the Sentinels name a replica in place of `old` and that replica answers as
        the master."""

        def promoted() -> bool:
            address = self.master_address()
            if address is None or address[1] == old.port:
                return False
            node = next(node for node in self.data if node.port == address[1])
            try:
                return node.role() == "master"
            except redis.RedisError:
                return False

        wait_until(promoted, timeout=30, interval=0.05, what="a replica to be promoted")

    def close(self) -> None:
        for process in [*self.sentinels, *self.data]:
            process.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def main() -> None:
    """`python -m tests.scale.redis_sentinel`: a Sentinel-watched Redis for benches and manual
    runs; prints its REDIS_URL and runs until interrupted (bench/README.md)."""
    watched = RedisSentinelForTests().start()
    print(watched.url(), flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        watched.close()


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    main()
