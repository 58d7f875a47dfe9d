"""The whole story of issue 30 under `make run` (scripts/run.py: web, a prefork Celery worker and
beat) on a private append-only Redis and Postgres: Redis restarts while the worker runs a task.
/mcp answers throughout, nothing has to be restarted, the task in flight completes, and the
platform is whole again within seconds; the figures are printed (run with -s to see them)."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import httpx2

from infra import keys
from tests.conftest import free_port

from .harness import mcp_call, wait_until
from .tasks import Tasks

ROOT = Path(__file__).resolve().parents[2]


class MakeRun:
    """scripts/run.py on the private services."""

    def __init__(self, tmp_path: Path, *, database_url: str, redis_url: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url}
        env.pop("TEST_DB_NAME", None)
        self.log_path = tmp_path / "run.log"
        with open(self.log_path, "wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "scripts/run.py", "--port", str(self.port)],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # stop() may kill its group, never this test run's
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        """SIGTERM: run.py stops its three in order; their groups are killed if it cannot."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


CONNECTED = re.compile(
    r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): INFO/MainProcess\] Connected to "
)


def reconnections(log: str, *, after: float) -> list[float]:
    """When Celery's processes (re)connected to the broker after `after` (epoch seconds), from
    their log lines (local time, millisecond precision)."""
    times = []
    for line in log.splitlines():
        if match := CONNECTED.match(line):
            moment = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            if moment > after:
                times.append(moment)
    return times


def unacked(redis) -> list[dict]:
    """The headers of the messages the worker took and has not acknowledged: kombu's Redis
    transport keeps them in the `unacked` hash until the acknowledgement, or until it hands
    them out again after its visibility timeout (an hour)."""
    return [json.loads(body)[0]["headers"] for body in redis.hvals("unacked")]


def named(messages: list[dict]) -> list[str]:
    return sorted(
        f"{m['task']}{m.get('argsrepr') or ''} expires={m.get('expires')}" for m in messages
    )


class McpPoller(threading.Thread):
    """Calls the tenant's `echo` tool every 0.1 s; keeps (time, outcome) of every call:
    "ok", "error <what>" (an answer, but not the tool's), or "no answer <exception>"."""

    def __init__(self, url: str, tenant: dict):
        super().__init__(daemon=True)
        self.url, self.tenant = url, tenant
        self.calls: list[tuple[float, str]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                response = mcp_call(self.url, self.tenant["slug"], self.tenant["key"], timeout=5)
                body = response.json()
                ok = response.status_code == 200 and "result" in body
                outcome = "ok" if ok else f"error {response.status_code} {body.get('error')}"
            except (httpx2.HTTPError, ValueError) as exc:
                outcome = f"no answer {exc!r}"
            self.calls.append((time.monotonic(), outcome))
            self.done.wait(0.1)

    def stop(self) -> None:
        self.done.set()
        if self.is_alive():
            self.join(10)


def test_under_make_run_a_redis_restart_with_a_task_in_flight_heals_while_mcp_answers(
    fault_postgres, fault_database, fault_tenant, fault_redis, tmp_path
):
    redis = fault_redis.client()
    run = MakeRun(tmp_path, database_url=fault_database, redis_url=fault_redis.url(0))
    poller = McpPoller(run.url, fault_tenant)
    try:
        wait_until(
            lambda: redis.zcard(keys.HEARTBEAT_WORKERS) and redis.get(keys.HEARTBEAT_BEAT),
            timeout=90,
            what=f"the worker's and beat's heartbeats\n{run.log()}",
        )
        wait_until(
            lambda: mcp_call(run.url, fault_tenant["slug"], fault_tenant["key"]).status_code == 200,
            timeout=60,
            what=f"/mcp\n{run.log()}",
        )
        tasks = Tasks(fault_postgres, fault_database, fault_redis.url(0))
        in_flight = tasks.create("slow_compute", {"ms": 15000, "label": "in flight"})
        wait_until(lambda: tasks.state(in_flight) == ("working", 1), timeout=30, what="start")
        assert redis.hlen("unacked") >= 1  # the task's message (and maybe a platform job's)
        poller.start()
        wait_until(lambda: len(poller.calls) >= 5, timeout=10, what="calls before the restart")

        restarted, restarted_wall = time.monotonic(), time.time()
        fault_redis.restart()
        back = time.monotonic()
        after = tasks.create("greet", {"name": "after the restart"})
        wait_until(
            lambda: tasks.state(after)[0] == "completed",
            timeout=120,
            what=f"a task sent after the restart\n{run.log()}",
        )
        healed = time.monotonic()
        wait_until(
            lambda: tasks.state(in_flight)[0] == "completed",
            timeout=60,
            what=f"the task in flight\n{run.log()}",
        )
        # The tasks' messages are acknowledged. A platform job the worker had taken but not yet
        # started when Redis went away may stay held: putting it back failed on the dead
        # connection, so kombu hands it out after the visibility timeout, long past its expiry
        # (its schedule's interval), and the worker drops it; the next tick has run meanwhile.
        wait_until(
            lambda: not [m for m in unacked(redis) if m["task"] == "mcptasks.run_tool"],
            timeout=30,
            what=f"acknowledgements of the tasks' messages: {named(unacked(redis))}\n{run.log()}",
        )
        assert all(m.get("expires") for m in unacked(redis)), named(unacked(redis))
        wait_until(lambda: len([c for c in poller.calls if c[0] > healed]) >= 5, timeout=10)
        poller.stop()

        unanswered = [outcome for _, outcome in poller.calls if outcome.startswith("no answer")]
        during = [c for c in poller.calls if c[0] >= restarted]
        not_ok = [(round(t - restarted, 2), outcome) for t, outcome in during if outcome != "ok"]
        reconnected = reconnections(run.log(), after=restarted_wall)
        created, ran = tasks.timing(after)
        print(
            f"\nRedis down for {back - restarted:.2f} s; the worker connected to it again "
            f"{', '.join(f'{t - restarted_wall:.2f}' for t in reconnected)} s after the restart "
            f"began; a task created {created - restarted_wall:.2f} s after it (a Django process's "
            f"start) ran to its end {ran:.2f} s after its creation; /mcp: {len(poller.calls)} "
            "calls, "
            f"{len(unanswered)} unanswered, {len(not_ok)} answered with an error"
            + (f" (the last {max(t for t, _ in not_ok):.2f} s after the restart)" if not_ok else "")
        )
        assert reconnected, run.log()
        assert unanswered == [], unanswered
        assert all(outcome == "ok" for t, outcome in poller.calls if t > healed)
        assert tasks.state(in_flight) == ("completed", 1)
        assert run.process.poll() is None, run.log()
        log = run.log()
        assert "Unrecoverable error" not in log
        assert "process exited" not in log  # nothing had to be restarted
    finally:
        run.stop()
        poller.stop()
