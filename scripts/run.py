"""What `make run` serves with: the web server alone in embedded mode, or with REDIS_URL set the
web server, a Celery worker and Celery beat together, started and stopped together.

    python scripts/run.py [--host H] [--port P] [--workers N]
    python scripts/run.py --url-host H      # the host name printed URLs should use for H

Embedded mode (no REDIS_URL) keeps Redis and the task queue inside the one web process, so it
is uvicorn alone (this script becomes it) and --workers must stay 1.

With REDIS_URL, each of the three runs in its own session so a Ctrl-C at the terminal reaches
only this supervisor, which then stops all three in order (SIGTERM, then SIGKILL after
STOP_SECONDS); SIGTERM to this script does the same. When any of the three exits by itself the
others are stopped too and this script exits non-zero: nothing is left half running, e.g. a web
server accepting tasks no worker will ever run.
"""

import argparse
import contextlib
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STOP_SECONDS = 20.0
WILDCARDS = {"0.0.0.0", "::", "[::]", ""}


def url_host(host: str) -> str:
    """A host that reaches a server bound to `host`: for a wildcard, this machine's address on
    its default route (what other machines would use), else loopback."""
    if host not in WILDCARDS:
        return host
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET: picks a route, sends nothing
            return probe.getsockname()[0]
    except OSError:
        return "127.0.0.1"


LOOPBACK_NAMES = {"localhost", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def local_development(host: str, environ) -> str | None:
    """Turns OUTBOUND_ALLOW_LOOPBACK on in `environ` for a server only this machine can reach,
    unless it was given; returns the line to print about it (None when nothing was changed).

    Tools a developer points at upstreams on their own machine then work at once; a server on
    any other interface (HOST=0.0.0.0, a LAN address) keeps production's refusal, since people
    on the network could define tools that reach this machine's services."""
    if not is_loopback(host) or "OUTBOUND_ALLOW_LOOPBACK" in environ:
        return None
    environ["OUTBOUND_ALLOW_LOOPBACK"] = "true"
    return (
        f"getmcp: local development (HOST={host} is loopback): OUTBOUND_ALLOW_LOOPBACK=true, so "
        "tools may call upstreams on this machine (127.0.0.0/8, ::1). Set "
        "OUTBOUND_ALLOW_LOOPBACK=false to refuse them as a production deployment does."
    )


# The header deadline against slow clients lives in getmcp.http_protocol (see docs/architecture.md).
UVICORN_HTTP = ["--http", "getmcp.http_protocol:HttpProtocol"]


def commands(host: str, port: int, workers: int, schedule: Path) -> dict[str, list[str]]:
    python = sys.executable
    web = [python, "-m", "uvicorn", "getmcp.asgi:application", *UVICORN_HTTP, "--host", host]
    web += ["--port", str(port)]
    if workers > 1:
        web += ["--workers", str(workers)]
    if not os.environ.get("REDIS_URL"):
        return {"web": web}
    celery = [python, "-m", "celery", "-A", "getmcp.celery:app"]
    level = f"--loglevel={os.environ.get('LOG_LEVEL', 'INFO')}"
    return {
        "web": web,
        "worker": [*celery, "worker", level],
        "beat": [*celery, "beat", level, f"--schedule={schedule}"],
    }


class Supervisor:
    def __init__(self, processes: dict[str, list[str]]):
        self.commands = processes
        self.children: dict[str, subprocess.Popen] = {}
        self.stopping = False

    def start(self) -> None:
        for name, command in self.commands.items():
            # Own session: the terminal's Ctrl-C goes to us alone; we stop them in order.
            self.children[name] = subprocess.Popen(command, cwd=ROOT, start_new_session=True)

    def request_stop(self, signum, _frame) -> None:
        if not self.stopping:
            print(f"\ngetmcp: {signal.Signals(signum).name}: stopping {self.names()}", flush=True)
        self.stopping = True

    def names(self) -> str:
        return ", ".join(self.children)

    def watch(self) -> int:
        """Wait until a signal asks us to stop or a child exits; returns the exit code."""
        while not self.stopping:
            for name, child in self.children.items():
                code = child.poll()
                if code is not None:
                    print(
                        f"getmcp: the {name} process exited (code {code}); stopping the others",
                        file=sys.stderr,
                        flush=True,
                    )
                    self.stop()
                    return code if code > 0 else 1
            time.sleep(0.2)
        self.stop()
        return 0

    def stop(self) -> None:
        for child in self.children.values():
            self._signal(child, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for child in self.children.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(max(0.1, deadline - time.monotonic()))
            self._signal(child, signal.SIGKILL)  # whatever of its group is still there
            child.wait()

    @staticmethod
    def _signal(child: subprocess.Popen, signum: int) -> None:
        # To the child's whole group, even when the child itself has died: what it started
        # (uvicorn's worker processes) may still be running.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signum)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1, help="web processes")
    parser.add_argument("--url-host", metavar="HOST", help="print the URL host for HOST, exit")
    args = parser.parse_args(argv)
    if args.url_host is not None:
        print(url_host(args.url_host))
        return 0
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    embedded = not os.environ.get("REDIS_URL")
    if embedded and args.workers > 1:
        print(
            "getmcp: WORKERS>1 needs REDIS_URL (and DATABASE_URL): embedded mode keeps Redis and "
            "the task queue inside one process.",
            file=sys.stderr,
        )
        return 2
    notice = local_development(args.host, os.environ)
    if notice:
        print(notice, flush=True)
    (ROOT / "var").mkdir(exist_ok=True)
    processes = commands(args.host, args.port, args.workers, ROOT / "var" / "celerybeat-schedule")
    if embedded:
        os.chdir(ROOT)
        os.execv(processes["web"][0], processes["web"])
    if not os.environ.get("DATABASE_URL"):
        print(
            "getmcp: REDIS_URL without DATABASE_URL: the web server, worker and beat share "
            "SQLite (var/db.sqlite3); set DATABASE_URL to a Postgres database for real use.",
            file=sys.stderr,
        )
    # Several web processes share their Prometheus metrics through files (docs/observability.md).
    sys.path.insert(0, str(ROOT))
    from observability import multiproc

    metrics_dir = multiproc.prepare(args.workers)
    supervisor = Supervisor(processes)
    signal.signal(signal.SIGINT, supervisor.request_stop)
    signal.signal(signal.SIGTERM, supervisor.request_stop)
    supervisor.start()
    print(
        f"getmcp: web ({args.workers} process{'es' if args.workers > 1 else ''}) on "
        f"{args.host}:{args.port}, a Celery worker and Celery beat; Ctrl-C stops all three.",
        flush=True,
    )
    try:
        return supervisor.watch()
    finally:
        multiproc.cleanup(metrics_dir)


if __name__ == "__main__":
    sys.exit(main())
