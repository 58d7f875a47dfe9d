"""getmcp deployed on several hosts (network namespaces, tests/multihost/network.py):

    db       10.77.1.1   Postgres (a cluster of its own)
    pool     10.77.1.2   PgBouncer, transaction mode, in front of db
    redisN   10.77.3.N   Redis Cluster nodes (masters, then replicas)
    broker   10.77.2.1   a standalone Redis: the Celery broker and the Channels layer
    webN     10.77.4.N   one getmcp web process each (uvicorn)
    lb       10.77.5.1   haproxy, round robin, no sticky sessions (scripts/balancer.py)
    worker   10.77.6.1   a Celery worker (prefork) and Celery beat
    (root)   10.77.0.1   the bridge: the test process, the clients, `manage.py` commands

(The conformance suite runs on the balancer host and reaches haproxy on that host's loopback:
its DNS-rebinding scenario needs a localhost URL.)

Every process reaches every other one by its host's address over the bridge. The CI shape is
two web hosts and three cluster masters without replicas; `MULTIHOST_FULL=1` (`make multihost`)
builds three web hosts and three masters with a replica each.

    python -m tests.multihost.topology      # build it, print the balancer's URL, wait for ^C
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.multihost.network import Network
from tests.multihost.services import (
    ROOT,
    Balancer,
    Celery,
    PgBouncer,
    Postgres,
    Redis,
    Web,
    create_cluster,
)

DATABASE = "getmcp"
PORTS = {"postgres": 22432, "pgbouncer": 22433, "redis": 22379, "broker": 22380}
WEB_PORT = 22080
BALANCER_PORT = 22000
RUN_DIR = Path(tempfile.gettempdir()) / "getmcp-multihost"
# The namespaces, addresses and ports are fixed: two runs on one machine take turns.
LOCK_FILE = Path(tempfile.gettempdir()) / "getmcp-multihost.lock"


@dataclass(frozen=True)
class Shape:
    web_hosts: int
    masters: int
    replicas_per_master: int


CI = Shape(web_hosts=2, masters=3, replicas_per_master=0)
FULL = Shape(web_hosts=3, masters=3, replicas_per_master=1)


def shape_from_environment() -> Shape:
    return FULL if os.environ.get("MULTIHOST_FULL") == "1" else CI


class Topology:
    def __init__(self, shape: Shape):
        self.shape = shape
        self._lock = open(LOCK_FILE, "w")  # noqa: SIM115 (closed in close)
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.network = Network()
        self.dir = RUN_DIR

    def start(self) -> Topology:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        # What an earlier (killed) run left goes: its processes with its namespaces, then files.
        net = self.network.start()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        os.chmod(self.dir, 0o755)
        db, pool = net.add("db", "10.77.1.1"), net.add("pool", "10.77.1.2")
        broker_host = net.add("broker", "10.77.2.1")
        count = self.shape.masters * (1 + self.shape.replicas_per_master)
        redis_hosts = [net.add(f"redis{n}", f"10.77.3.{n}") for n in range(1, count + 1)]
        web_hosts = [net.add(f"web{n}", f"10.77.4.{n}") for n in range(1, self.shape.web_hosts + 1)]
        lb, worker_host = net.add("lb", "10.77.5.1"), net.add("worker", "10.77.6.1")

        self.postgres = Postgres(db, PORTS["postgres"], self.dir).start()
        self.postgres.create_database(DATABASE)
        self.pgbouncer = PgBouncer(pool, PORTS["pgbouncer"], self.dir, target=self.postgres).start()
        self.redis = [Redis(host, PORTS["redis"], self.dir, cluster=True) for host in redis_hosts]
        for node in self.redis:
            node.start()
        create_cluster(self.redis, self.shape.replicas_per_master)
        self.broker = Redis(broker_host, PORTS["broker"], self.dir, cluster=False).start()
        self.webs = [Web(host, WEB_PORT, self.dir, env=self.env()) for host in web_hosts]
        self.balancer = Balancer(lb, BALANCER_PORT, self.dir, backends=self.webs)
        self.manage("migrate", "--noinput")
        self.worker = Celery(worker_host, self.dir, env=self.env())
        self.beat = Celery(worker_host, self.dir, env=self.env(), beat=True)
        started = (*self.webs, self.worker, self.beat)
        for service in started:
            service.launch()
        for service in started:
            service.ready()
        self.balancer.start()

    @property
    def url(self) -> str:
        """The balancer: where clients go."""
        return self.balancer.url

    def env(self, **extra: str) -> dict:
        """What every getmcp process of the topology runs with (web, worker, beat, manage.py)."""
        hosts = [host.address for host in self.network.hosts.values()]
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "getmcp.settings",
            "DATABASE_URL": self.pgbouncer.url(DATABASE),
            "DATABASE_TRANSACTION_POOLING": "true",
            "REDIS_URL": "redis://" + ",".join(node.address for node in self.redis) + "/0",
            "REDIS_CLUSTER": "true",
            "CELERY_BROKER_URL": f"redis://{self.broker.address}/0",
            "CHANNELS_REDIS_URL": f"redis://{self.broker.address}/1",
            "ALLOWED_HOSTS": ",".join(["localhost", *hosts]),
            # As the conformance suite on the balancer host sees it: the OAuth issuer must be
            # where its client reaches it (tests/multihost/test_conformance.py).
            "SITE_URL": f"http://localhost:{BALANCER_PORT}",
            "MCP_SSE_KEEPALIVE_SECONDS": "1",
            **extra,
        }
        # The pytest run's test database is its own business, not the topology's.
        env.pop("TEST_DB_NAME", None)
        return env

    def manage(self, *args: str, timeout: float = 300) -> str:
        """`manage.py` from the root namespace (an operator's shell) against the topology."""
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if result.returncode:
            raise AssertionError(f"manage.py {' '.join(args)}:\n{result.stdout}\n{result.stderr}")
        return result.stdout

    def close(self) -> None:
        for name in ("beat", "worker", "balancer", "broker", "pgbouncer"):
            service = getattr(self, name, None)
            if service is not None:
                service.stop(timeout=5)
        for service in (*getattr(self, "webs", []), *getattr(self, "redis", [])):
            service.stop(timeout=5)
        if getattr(self, "postgres", None) is not None:
            self.postgres.stop()
        self.network.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        self._lock.close()


def main() -> None:
    topology = Topology(shape_from_environment()).start()
    print(f"getmcp on {topology.url} (logs in {topology.dir}); ^C ends it", flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        topology.close()


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    main()
