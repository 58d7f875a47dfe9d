"""Hosts as Linux network namespaces on one machine, joined by a bridge.

Each host is a namespace `gm-mh-<name>` with one veth pair: `eth0` inside, with its own
10.77.x.y address, and `gmmh-<name>` in the root namespace, a port of the bridge `gmmh-br`
(10.77.0.1, where the test process itself sits). A host's loopback is its own: a service bound
to a host's address is reached from the other hosts over the bridge, never over 127.0.0.1.
Cutting a host off (`cut`) takes its bridge port down: its packets go nowhere, its open
connections hang as they would when a machine drops off the network, and its processes keep
running.

Needs root (`ip netns`, veth pairs). Names carry the `gm-mh-`/`gmmh-` prefixes so `sweep()` can
remove what an earlier run left (a killed run leaves namespaces behind) without touching
anything else on the machine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from pathlib import Path

NAMESPACE_PREFIX = "gm-mh-"
LINK_PREFIX = "gmmh-"
BRIDGE = "gmmh-br"
GATEWAY = "10.77.0.1"
PREFIX_LENGTH = 16


def available() -> str:
    """Why hosts cannot be built here ('' when they can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2 (`ip`) is missing"
    return ""


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and result.returncode:
        raise AssertionError(f"ip {' '.join(args)}: {result.stderr.strip()}")
    return result


def _namespaces() -> list[str]:
    listed = ip("netns", "list", check=False).stdout.splitlines()
    return [line.split()[0] for line in listed if line.startswith(NAMESPACE_PREFIX)]


def _kill_everything_in(namespace: str) -> None:
    """SIGKILL what still runs in one of our namespaces (processes this harness started)."""
    for pid in ip("netns", "pids", namespace, check=False).stdout.split():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)


def sweep() -> None:
    """Remove every namespace, link and the bridge of this harness, whoever's run left them."""
    for namespace in _namespaces():
        _kill_everything_in(namespace)
        ip("netns", "delete", namespace, check=False)
    for line in ip("-o", "link", "show", check=False).stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(LINK_PREFIX):
            ip("link", "delete", name, check=False)


class Host:
    """One namespace with one address; `command()` wraps an argv to run inside it."""

    def __init__(self, name: str, address: str):
        self.name = name
        self.address = address
        self.namespace = NAMESPACE_PREFIX + name
        self.link = LINK_PREFIX + name
        assert len(self.link) <= 15, f"interface name too long: {self.link}"

    def create(self) -> Host:
        ip("netns", "add", self.namespace)
        ip(
            "link",
            "add",
            self.link,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            self.namespace,
        )
        ip("link", "set", self.link, "master", BRIDGE, "up")
        inside = ("-n", self.namespace)
        ip(*inside, "addr", "add", f"{self.address}/{PREFIX_LENGTH}", "dev", "eth0")
        ip(*inside, "link", "set", "eth0", "up")
        ip(*inside, "link", "set", "lo", "up")
        return self

    def command(self, argv: list[str], *, user: str = "") -> list[str]:
        wrapped = ["ip", "netns", "exec", self.namespace]
        if user:
            wrapped += ["runuser", "-u", user, "--"]
        return wrapped + argv

    def popen(
        self, argv: list[str], *, log: Path, env: dict | None = None, user: str = "", cwd=None
    ) -> subprocess.Popen:
        # `ip netns exec` execs the command: the Popen's pid is the service's own.
        with open(log, "ab") as out:
            return subprocess.Popen(
                self.command(argv, user=user),
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=cwd,
            )

    def run(self, argv: list[str], *, user: str = "", timeout: float = 120, cwd=None):
        result = subprocess.run(
            self.command(argv, user=user), capture_output=True, text=True, timeout=timeout, cwd=cwd
        )
        if result.returncode:
            raise AssertionError(f"{argv[0]} on {self.name}: {result.stdout}\n{result.stderr}")
        return result

    def cut(self) -> None:
        """Off the network: its bridge port goes down (its processes keep running)."""
        ip("link", "set", self.link, "down")

    def reconnect(self) -> None:
        ip("link", "set", self.link, "up")

    def destroy(self) -> None:
        _kill_everything_in(self.namespace)
        ip("netns", "delete", self.namespace, check=False)
        ip("link", "delete", self.link, check=False)


class Network:
    """The bridge and the hosts on it; `close()` removes them all."""

    def __init__(self) -> None:
        self.hosts: dict[str, Host] = {}

    def start(self) -> Network:
        sweep()
        ip("link", "add", BRIDGE, "type", "bridge")
        ip("addr", "add", f"{GATEWAY}/{PREFIX_LENGTH}", "dev", BRIDGE)
        ip("link", "set", BRIDGE, "up")
        return self

    def add(self, name: str, address: str) -> Host:
        host = Host(name, address).create()
        self.hosts[name] = host
        return host

    def close(self) -> None:
        for host in self.hosts.values():
            host.destroy()
        ip("link", "delete", BRIDGE, check=False)
        sweep()
