"""A real Redis Cluster for tests: three masters and three replicas, `redis-server` children on
spare loopback ports, their files in a private temp dir (never the machine's Redis).

`cluster-node-timeout` is short (`NODE_TIMEOUT_MS`) so a killed master's replica is promoted
within a couple of seconds, which is what the failover test measures."""

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis
from redis.cluster import RedisCluster as SyncCluster

from tests.waiting import wait_until

NODE_TIMEOUT_MS = 1000
# Plain imports only (no Django): `python -m tests.scale.redis_cluster` runs without settings.
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_pair_free(port: int) -> bool:
    for candidate in (port, port + 10_000):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", candidate))
            except OSError:
                return False
    return True


def cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is free too, so at most 55535."""
    while True:
        port = free_port()
        if port <= 55_535 and _port_pair_free(port):
            return port


class RedisProcess:
    """A redis-server child on a loopback port: its client, liveness, SIGKILL and role (the
    Sentinel harness, tests/scale/redis_sentinel.py, uses it too)."""

    port: int
    process: subprocess.Popen | None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=1)

    def ping(self) -> bool:
        try:
            return bool(self.client().ping())
        except redis.RedisError:
            return False

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        if self.running:
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def role(self) -> str:
        return self.client().execute_command("ROLE")[0].decode()


class Node(RedisProcess):
    def __init__(self, directory: Path, port: int, appendfsync: str = "always"):
        self.appendfsync = appendfsync
        self.port = port
        self.dir = directory / str(port)
        self.dir.mkdir()
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.dir),
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                str(NODE_TIMEOUT_MS),
                # A replica promotes itself however long it was cut off from its master.
                "--cluster-replica-validity-factor",
                "0",
                "--appendonly",
                "yes",
                "--appendfsync",
                self.appendfsync,
                "--save",
                "",
                "--logfile",
                str(self.dir / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


class RedisClusterForTests:
    def __init__(self, masters: int = 3, replicas_per_master: int = 1, appendfsync: str = "always"):
        """`appendfsync` "always" for the failover tests (an acknowledged write is on disk);
        benches take docker-compose.yml's "everysec"."""
        self.dir = Path(tempfile.mkdtemp(prefix="redis-cluster-"))
        count = masters * (1 + replicas_per_master)
        self.replicas_per_master = replicas_per_master
        self.nodes = [Node(self.dir, cluster_port(), appendfsync) for _ in range(count)]

    def url(self) -> str:
        """Every node, comma-separated (infra.redis.cluster_url_and_nodes): a process started
        after one of them died still finds the cluster."""
        return "redis://" + ",".join(f"127.0.0.1:{node.port}" for node in self.nodes) + "/0"

    def start(self) -> "RedisClusterForTests":
        try:
            return self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> "RedisClusterForTests":
        for node in self.nodes:
            node.start()
        for node in self.nodes:
            wait_until(node.ping, timeout=15, what=f"redis on port {node.port}")
        subprocess.run(
            [REDIS_CLI, "--cluster", "create"]
            + [f"127.0.0.1:{node.port}" for node in self.nodes]
            + ["--cluster-replicas", str(self.replicas_per_master), "--cluster-yes"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        wait_until(self.healthy, timeout=30, interval=0.2, what="the cluster to be ok")
        return self

    def healthy(self) -> bool:
        """Every slot served, and every live node agrees (cluster_state:ok)."""
        for node in self.nodes:
            if not node.running:
                continue
            try:
                info = node.client().execute_command("CLUSTER", "INFO").decode()
            except redis.RedisError:
                return False
            if "cluster_state:ok" not in info:
                return False
        return True

    def client(self) -> SyncCluster:
        return SyncCluster(host="127.0.0.1", port=self._any().port, socket_timeout=2)

    def _any(self) -> Node:
        return next(node for node in self.nodes if node.running and node.ping())

    def master_of(self, key: str) -> Node:
        slot = self.client().keyslot(key)
        for first, last, master, *_ in self._any().client().execute_command("CLUSTER", "SLOTS"):
            if first <= slot <= last:
                return next(node for node in self.nodes if node.port == int(master[1]))
        raise AssertionError(f"no master serves {key}")

    def slot_ranges_of(self, master: Node) -> list[tuple[int, int]]:
        return [
            (first, last)
            for first, last, owner, *_ in self._any().client().execute_command("CLUSTER", "SLOTS")
            if int(owner[1]) == master.port
        ]

    def replicas_of(self, master: Node) -> list[Node]:
        myself = master.client().execute_command("CLUSTER", "MYID").decode()
        lines = self._any().client().execute_command("CLUSTER", "NODES").decode().splitlines()
        ports = {
            int(line.split()[1].split("@")[0].rsplit(":", 1)[1])
            for line in lines
            if line.split()[3] == myself
        }
        return [node for node in self.nodes if node.port in ports]

    def kill_and_wait_for_promotion(self, master: Node) -> float:
        """SIGKILL a master; returns the seconds until one of its replicas is a master and the
        cluster serves every slot again."""
        replicas = self.replicas_of(master)
        assert replicas, "the master has no replica"
        started = time.monotonic()
        master.kill()

        def promoted() -> bool:
            try:
                return any(node.role() == "master" for node in replicas) and self.healthy()
            except redis.RedisError:
                return False

        wait_until(promoted, timeout=30, interval=0.05, what="a replica to be promoted")
        return time.monotonic() - started

    def flush(self) -> None:
        for node in self.nodes:
            if node.running and node.role() == "master":
                node.client().flushall()

    def close(self) -> None:
        for node in self.nodes:
            node.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def main() -> None:
    """`python -m tests.scale.redis_cluster`: a cluster for benches and manual runs; prints its
    REDIS_URL and runs until interrupted (bench/README.md, "Redis Cluster")."""
    cluster = RedisClusterForTests().start()
    print(cluster.url(), flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        cluster.close()


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    main()
