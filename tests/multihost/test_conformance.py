"""The official MCP conformance suite (scripts/conformance.sh) against the platform deployed on
several hosts: the suite talks to the balancer host, its connections land on different web
hosts, its tasks run on the worker host, state lives in the Redis Cluster and in Postgres
behind PgBouncer. The suite runs on the balancer host and reaches haproxy on that host's own
loopback (its DNS-rebinding scenario needs a localhost URL); haproxy reaches the web hosts over
the network.

Every run the script makes by default: the requirement sets, the extra scenarios and the
authorization-server scenarios (headless Chromium signing in on the balancer host)."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_official_conformance_suite_passes_through_the_balancer_host(topology):
    # Installed from here: the balancer host, where the suite runs, has no way out.
    subprocess.run(
        ["scripts/conformance.sh"],
        cwd=ROOT,
        env={**os.environ, "CONFORMANCE_INSTALL_ONLY": "1"},
        check=True,
        capture_output=True,
        timeout=600,
    )
    lb = topology.network.hosts["lb"]
    env = topology.env(
        CONFORMANCE_URL=f"http://localhost:{topology.balancer.port}",
        CONFORMANCE_DATABASE_URL=topology.env()["DATABASE_URL"],
        CONFORMANCE_REDIS_URL=topology.env()["REDIS_URL"],
    )
    before = topology.balancer.connections_per_process()
    ran = subprocess.run(
        lb.command(["scripts/conformance.sh"]),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    summary = ran.stdout[ran.stdout.rfind("Conformance summary") :]
    assert ran.returncode == 0, f"{summary or ran.stdout[-4000:]}\n{ran.stderr[-4000:]}"
    assert "conformance: all runs passed" in ran.stdout
    after = topology.balancer.connections_per_process()
    # Every web host served part of the suite.
    assert all(after[name] > before.get(name, 0) for name in after), (before, after)
