"""Real `celery worker` processes for tests: on this run's Redis DB and test database."""

import os
import subprocess
import sys
import uuid
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

from tests import waiting

ROOT = Path(__file__).resolve().parents[1]


def database_url_for_workers() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    """A real `celery worker` process on this test's Redis DB and test database.

    By default it consumes every queue (platform jobs and MCP tasks) with one slot; `queues`
    narrows it as a production pool would be, `concurrency` > 1 gives it a thread pool, and
    `prefork=True` Celery's default pool of processes (what `make run` and compose start), whose
    main process runs kombu's event loop."""

    def __init__(
        self,
        database_url: str,
        log_dir: Path,
        *,
        redis_url: str | None = None,
        queues: str | None = None,
        concurrency: int = 1,
        prefork: bool = False,
        env: dict | None = None,
    ):
        self.name = f"test-worker-{uuid.uuid4().hex[:8]}"
        self.log_path = log_dir / f"{self.name}.log"
        pool = ["--pool=solo"] if concurrency == 1 else ["--pool=threads", f"-c{concurrency}"]
        if prefork:
            pool = ["--pool=prefork", f"-c{concurrency}"]
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url or settings.REDIS_URL,
            "DJANGO_SETTINGS_MODULE": "getmcp.settings",
            **(env or {}),
        }
        env.pop("TEST_DB_NAME", None)
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "getmcp.celery",
                "worker",
                *pool,
                *(["-Q", queues] if queues else []),
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-n",
                f"{self.name}@%h",
            ],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout=60.0):
        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError("worker exited")
            return " ready." in self.log()

        try:
            waiting.wait_until(ready, timeout=timeout, interval=0.2, what="the worker to be ready")
        except AssertionError as failed:
            raise AssertionError(f"{failed}:\n{self.log()}") from None
        return self

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._log.close()


@contextmanager
def running_workers(log_dir: Path):
    """Yields `start()`, which starts a worker and waits until it is ready; stops them all."""
    started = []

    def start(**options) -> Worker:
        worker = Worker(database_url_for_workers(), log_dir, **options)
        started.append(worker)
        return worker.wait_ready()

    try:
        yield start
    finally:
        for worker in started:
            worker.stop()


class SharedWorker:
    """A module's Celery worker: started when a test needs one alive, kept for the next test
    (a worker's start is most of such a test's time), stopped when a test needs none or one of
    its own. Yielded by a module-scoped fixture around `running_workers`."""

    def __init__(self, start):
        self._start = start
        self.current: Worker | None = None

    def alive(self) -> Worker:
        if self.current is None or self.current.process.poll() is not None:
            # A thread pool: a task a previous test left stopping cannot hold the only slot.
            self.current = self._start(concurrency=4)
        return self.current

    def stop(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None


def wait_until(predicate, timeout=20.0, interval=0.1, what="condition"):
    """tests.waiting.wait_until with the patience a worker process needs by default."""
    return waiting.wait_until(predicate, timeout=timeout, interval=interval, what=what)
