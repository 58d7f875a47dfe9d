"""What `make run` serves with: the web server alone in embedded mode, or with REDIS_URL set the
web server, a Celery worker and Celery beat together, started and stopped together.

    python scripts/run.py [--host H] [--port P] [--workers N]
    python scripts/run.py --url-host H      # the host name printed URLs should use for H

Embedded mode (no REDIS_URL) keeps Redis and the task queue inside the one web process, so it
is uvicorn alone (this script becomes it) and --workers must stay 1.

With REDIS_URL, each of the three runs in its own session so a Ctrl-C at the terminal reaches
only this supervisor, which then stops all three in order (SIGTERM, then SIGKILL after
STOP_SECONDS); SIGTERM to this script does the same.

When one of them exits by itself (a crash, a kill, a broker it gave up on) it is restarted with
backoff (`backoff()`: 1 s, 2 s, 4 s... at most MAX_DELAY) while the others keep running, so the
web server goes on answering /mcp while a worker comes back; what it left behind (pool
processes) is killed first. Meanwhile a note in Redis makes the dashboard's banner say that it
is being restarted (getmcp/heartbeat.py). Only a process that never got going (GIVE_UP_AFTER
exits in a row before it ever ran STABLE_SECONDS: a port in use, a broken install) stops the
others and makes this script exit non-zero, rather than retrying forever.
"""

import argparse
import contextlib
import ipaddress
import json
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


def environment():
    """The platform's variables as the processes started here will read them, typed and with
    their defaults (getmcp/environment/); read afresh, since this script changes some."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from getmcp.environment import Environment

    return Environment()


def commands(host: str, port: int, workers: int, schedule: Path) -> dict[str, list[str]]:
    python = sys.executable
    variables = environment()
    web = [python, "-m", "uvicorn", "getmcp.asgi:application", *UVICORN_HTTP, "--host", host]
    web += ["--port", str(port)]
    if workers > 1:
        web += ["--workers", str(workers)]
    if not variables.REDIS_URL:
        return {"web": web}
    celery = [python, "-m", "celery", "-A", "getmcp.celery:app"]
    level = f"--loglevel={variables.LOG_LEVEL}"
    return {
        "web": web,
        "worker": [*celery, "worker", level],
        "beat": [*celery, "beat", level, f"--schedule={schedule}"],
    }


# Restarts: the first after FIRST_DELAY seconds, each next one twice as late, at most MAX_DELAY.
# A run of STABLE_SECONDS forgives the earlier exits (the next crash waits FIRST_DELAY again).
FIRST_DELAY = 1.0
MAX_DELAY = 30.0
STABLE_SECONDS = 60.0
# A process that never started well (exited GIVE_UP_AFTER times in a row before it ever ran
# STABLE_SECONDS) is a setup error, such as a port in use or a broken install: no use retrying.
GIVE_UP_AFTER = 5
# The restart note the dashboard shows stays until the new process has run this long.
SETTLED_SECONDS = 10.0


def backoff(exits: int) -> float:
    """Seconds before the restart that follows the `exits`-th exit in a row (1, 2, 3...)."""
    return min(MAX_DELAY, FIRST_DELAY * 2 ** max(0, exits - 1))


class RestartNotes:
    """What the supervisor is restarting, in Redis, for the dashboard's banner
    (getmcp/heartbeat.py reads it). Best effort: Redis may be the very thing that is away."""

    TTL_SECONDS = 600

    def __init__(self, url: str, sentinel_master: str = ""):
        import redis

        from infra import keys, redis_sentinel

        self.key = keys.SUPERVISOR_RESTARTS
        deadlines = {"socket_timeout": 0.5, "socket_connect_timeout": 0.5}
        if redis_sentinel.is_sentinel_url(url):
            self.redis = redis_sentinel.sync_master(url, sentinel_master, **deadlines)
        else:
            self.redis = redis.Redis.from_url(url, **deadlines)
        self.errors = (redis.RedisError, OSError)

    def restarting(self, name: str, *, code: int, exits: int, at: float) -> None:
        note = {"code": code, "exits": exits, "since": time.time(), "restart_at": at}
        with contextlib.suppress(*self.errors):
            pipe = self.redis.pipeline()
            pipe.hset(self.key, name, json.dumps(note))
            pipe.expire(self.key, self.TTL_SECONDS)
            pipe.execute()

    def settled(self, *names: str) -> bool:
        """Takes the notes back; False when Redis could not be told (try again later)."""
        try:
            self.redis.hdel(self.key, *names)
        except self.errors:
            return False
        return True


class Child:
    """One supervised process: its command, the running Popen (None while waiting to restart)
    and its record of exits."""

    def __init__(self, name: str, command: list[str]):
        self.name, self.command = name, command
        self.process: subprocess.Popen | None = None
        self.started_at = 0.0
        self.restart_at: float | None = None
        self.exits = 0  # in a row, each before STABLE_SECONDS of running
        self.ever_stable = False
        self.noted = False  # a restart note is in Redis

    def start(self) -> None:
        # Own session: the terminal's Ctrl-C goes to us alone; we stop them in order.
        self.process = subprocess.Popen(self.command, cwd=ROOT, start_new_session=True)
        self.started_at = time.monotonic()
        self.restart_at = None

    def running_for(self) -> float:
        return time.monotonic() - self.started_at if self.process else 0.0


class Supervisor:
    """Starts the processes, restarts one that exits (with backoff) while the others go on,
    and stops them all on SIGINT/SIGTERM."""

    def __init__(self, processes: dict[str, list[str]], notes: RestartNotes | None = None):
        self.children = {name: Child(name, command) for name, command in processes.items()}
        self.notes = notes
        self.stopping = False

    def start(self) -> None:
        for child in self.children.values():
            child.start()

    def request_stop(self, signum, _frame) -> None:
        if not self.stopping:
            print(f"\ngetmcp: {signal.Signals(signum).name}: stopping {self.names()}", flush=True)
        self.stopping = True

    def names(self) -> str:
        return ", ".join(self.children)

    def watch(self) -> int:
        """Supervise until a signal asks us to stop (0) or a process cannot start at all (its
        exit code)."""
        while not self.stopping:
            for child in self.children.values():
                failed = self._tend(child)
                if failed is not None:
                    self.stop()
                    return failed
            time.sleep(0.2)
        self.stop()
        return 0

    def _tend(self, child: Child) -> int | None:
        if child.process is None:
            if child.restart_at is not None and time.monotonic() >= child.restart_at:
                print(f"getmcp: restarting the {child.name} process", file=sys.stderr, flush=True)
                child.start()
            return None
        code = child.process.poll()
        if code is None:
            ran = child.running_for()
            if ran >= STABLE_SECONDS:
                child.exits, child.ever_stable = 0, True
            if child.noted and ran >= SETTLED_SECONDS:
                child.noted = not (self.notes and self.notes.settled(child.name))
            return None
        # Whatever it started (uvicorn's or Celery's pool processes) goes with it.
        self._signal(child.process, signal.SIGKILL)
        if child.running_for() >= STABLE_SECONDS:
            child.exits, child.ever_stable = 0, True
        child.process = None
        child.exits += 1
        if not child.ever_stable and child.exits >= GIVE_UP_AFTER:
            print(
                f"getmcp: the {child.name} process exited (code {code}) {child.exits} times "
                f"without starting well; stopping the others",
                file=sys.stderr,
                flush=True,
            )
            return code if code > 0 else 1
        delay = backoff(child.exits)
        child.restart_at = time.monotonic() + delay
        print(
            f"getmcp: the {child.name} process exited (code {code}); restarting it in "
            f"{delay:g} s (exit {child.exits} in a row); the others keep running",
            file=sys.stderr,
            flush=True,
        )
        if self.notes:
            at = time.time() + delay
            self.notes.restarting(child.name, code=code, exits=child.exits, at=at)
            child.noted = True
        return None

    def stop(self) -> None:
        running = [child.process for child in self.children.values() if child.process]
        for process in running:
            self._signal(process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for process in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(0.1, deadline - time.monotonic()))
            self._signal(process, signal.SIGKILL)  # whatever of its group is still there
            process.wait()
        if self.notes:
            self.notes.settled(*self.children)

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
    variables = environment()
    embedded = not variables.REDIS_URL
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
    if not variables.DATABASE_URL:
        print(
            "getmcp: REDIS_URL without DATABASE_URL: the web server, worker and beat share "
            "SQLite (var/db.sqlite3); set DATABASE_URL to a Postgres database for real use.",
            file=sys.stderr,
        )
    # Several web processes share their Prometheus metrics through files (docs/observability.md).
    sys.path.insert(0, str(ROOT))
    from observability import multiproc

    metrics_dir = multiproc.prepare(args.workers)
    supervisor = Supervisor(
        processes, RestartNotes(variables.REDIS_URL, variables.REDIS_SENTINEL_MASTER)
    )
    signal.signal(signal.SIGINT, supervisor.request_stop)
    signal.signal(signal.SIGTERM, supervisor.request_stop)
    supervisor.start()
    print(
        f"getmcp: web ({args.workers} process{'es' if args.workers > 1 else ''}) on "
        f"{args.host}:{args.port}, a Celery worker and Celery beat; one that exits is restarted, "
        "Ctrl-C stops all three.",
        flush=True,
    )
    try:
        return supervisor.watch()
    finally:
        multiproc.cleanup(metrics_dir)


if __name__ == "__main__":
    sys.exit(main())
