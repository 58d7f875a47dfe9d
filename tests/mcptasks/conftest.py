import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from servers.definition import import_definition
from servers.publishing import publish
from servers.redis import sync_client
from servers.snapshot import clear_cache, compile_definition

ROOT = Path(__file__).resolve().parents[2]


def tasks_definition(slug="tasks-demo"):
    optional = {"taskSupport": "optional"}
    return {
        "slug": slug,
        "name": slug,
        "tools": [
            {
                "name": "greet",
                "description": "Say hello.",
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                "execution": optional,
                "config": {"content": [{"type": "text", "text": "Hello, {{ name }}!"}]},
            },
            {
                "name": "slow_compute",
                "description": "Think for a while.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"ms": {"type": "integer"}, "label": {"type": "string"}},
                },
                "execution": optional,
                "kind": "workflow",
                "config": {
                    "steps": [
                        {"progress": {"progress": 0, "total": 1, "message": "starting"}},
                        {"log": {"level": "info", "message": "computing {{ label }}"}},
                        {"sleep": {"ms": "{{ ms }}"}},
                        {"return": {"content": [{"type": "text", "text": "done {{ label }}"}]}},
                    ]
                },
            },
            {
                "name": "confirm_delete",
                "description": "Ask before deleting.",
                "inputSchema": {"type": "object"},
                "execution": optional,
                "kind": "workflow",
                "config": {
                    "steps": [
                        {
                            "elicit": {
                                "message": "Delete it?",
                                "requestedSchema": {
                                    "type": "object",
                                    "properties": {"ok": {"type": "boolean"}},
                                },
                                "into": "confirm",
                            }
                        },
                        {
                            "return": {
                                "content": [{"type": "text", "text": "answer={{ confirm.action }}"}]
                            }
                        },
                    ]
                },
            },
            {
                "name": "protocol_error_job",
                "description": "Fails with a JSON-RPC error.",
                "inputSchema": {"type": "object"},
                "execution": optional,
                "kind": "workflow",
                "config": {"steps": [{"fail": {"message": "upstream exploded", "code": -32603}}]},
            },
            {
                "name": "failing_job",
                "description": "Fails with a tool error.",
                "inputSchema": {"type": "object"},
                "execution": optional,
                "kind": "workflow",
                "config": {"steps": [{"fail": {"message": "no such file"}}]},
            },
            {
                "name": "inline_only",
                "description": "Never a task.",
                "inputSchema": {"type": "object"},
                "config": {"content": [{"type": "text", "text": "ok"}]},
            },
        ],
    }


@pytest.fixture
def tasks_server(org, user):
    server = import_definition(tasks_definition(), org, user=user)
    publish(server)
    clear_cache()
    return server


@pytest.fixture
def snapshot(tasks_server):
    return compile_definition(
        tasks_definition(),
        server_id=tasks_server.pk,
        organization_id=tasks_server.organization_id,
        generation="test",
    )


@pytest.fixture(scope="module")
def clean_redis():
    sync_client().flushdb()


def database_url_for_workers() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    """A real `celery worker` process on this test's Redis DB and test database."""

    def __init__(self, database_url: str, log_dir: Path):
        self.name = f"test-f-{uuid.uuid4().hex[:8]}"
        self.log_path = log_dir / f"{self.name}.log"
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "REDIS_URL": settings.REDIS_URL,
            "DJANGO_SETTINGS_MODULE": "getmcp.settings",
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
                "--pool=solo",
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
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if " ready." in self.log():
                return self
            if self.process.poll() is not None:
                raise AssertionError(f"worker exited:\n{self.log()}")
            time.sleep(0.2)
        raise AssertionError(f"worker not ready in {timeout}s:\n{self.log()}")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._log.close()


@pytest.fixture
def start_worker(django_db_setup, tmp_path):
    started = []

    def start() -> Worker:
        worker = Worker(database_url_for_workers(), tmp_path)
        started.append(worker)
        return worker.wait_ready()

    yield start
    for worker in started:
        worker.stop()


def wait_until(predicate, timeout=20.0, interval=0.1, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")
