"""/healthz and /readyz on a real server process, with a real Celery worker and beat."""

import os
import subprocess
import sys

import httpx2
import pytest

from getmcp import heartbeat
from infra.redis import sync_client
from tests.celery_workers import ROOT, database_url_for_workers, running_workers, wait_until


@pytest.fixture
def quiet():
    sync_client().delete(heartbeat.WORKERS_KEY, heartbeat.BEAT_KEY)
    yield
    sync_client().delete(heartbeat.WORKERS_KEY, heartbeat.BEAT_KEY)


def test_liveness_answers_without_asking_anything_and_for_any_host(asgi_server):
    response = httpx2.get(f"{asgi_server.url}/healthz", headers={"host": "10.1.2.3"}, timeout=5)
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response.headers["cache-control"] == "no-store"


def test_probes_refuse_writes(asgi_server):
    assert httpx2.post(f"{asgi_server.url}/readyz", timeout=5).status_code == 405


def test_readiness_is_503_naming_the_missing_worker_and_beat(asgi_server, quiet):
    response = httpx2.get(f"{asgi_server.url}/readyz", headers={"host": "10.1.2.3"}, timeout=10)
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["postgres"]["ok"] is True and checks["redis"]["ok"] is True
    assert checks["worker"] == {**checks["worker"], "ok": False, "error": "no worker heartbeat"}
    assert checks["beat"]["ok"] is False


@pytest.fixture
def beat_process(live_database, tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for_workers(),
        "DJANGO_SETTINGS_MODULE": "getmcp.settings",
    }
    env.pop("TEST_DB_NAME", None)
    with open(tmp_path / "beat.log", "wb") as out:
        beat = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "getmcp.celery", "beat", "--loglevel=INFO"]
            + [f"--schedule={tmp_path / 'schedule'}"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    yield beat
    beat.terminate()
    beat.wait(10)
    from getmcp.celery import app

    app.control.purge()  # what beat sent must not run in a later test's worker


def test_readiness_is_200_with_a_live_worker_and_beat_and_503_once_the_worker_stops(
    asgi_server, quiet, tmp_path, beat_process
):
    with running_workers(tmp_path) as start:
        worker = start()
        wait_until(lambda: heartbeat.status()["beat"], timeout=30, what="beat's heartbeat")
        response = httpx2.get(f"{asgi_server.url}/readyz", timeout=10)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["status"] == "ok"
        assert {name: c["ok"] for name, c in body["checks"].items()} == {
            "postgres": True,
            "redis": True,
            "worker": True,
            "beat": True,
        }
        worker.stop()
    after = httpx2.get(f"{asgi_server.url}/readyz", timeout=10)
    assert after.status_code == 503
    assert after.json()["checks"]["worker"]["ok"] is False


def readiness_in_a_fresh_process(env: dict) -> dict:
    import json

    script = (
        "import asyncio, json, django; django.setup(); from getmcp.health import readiness; "
        "print(json.dumps(asyncio.run(readiness())))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env | {"DJANGO_SETTINGS_MODULE": "getmcp.settings"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_readiness_in_embedded_mode_names_sqlite_and_the_in_process_redis(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "TEST_DB_NAME")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    checks = readiness_in_a_fresh_process(env)["checks"]
    assert "postgres" not in checks
    assert checks["sqlite"]["ok"] is True
    assert checks["redis"] == {**checks["redis"], "ok": True, "embedded": True}


def test_readiness_on_postgres_names_postgres(live_database):
    env = {k: v for k, v in os.environ.items() if k != "TEST_DB_NAME"}
    checks = readiness_in_a_fresh_process(env | {"DATABASE_URL": database_url_for_workers()})[
        "checks"
    ]
    assert checks["postgres"]["ok"] is True and "sqlite" not in checks
    assert "embedded" not in checks["redis"]
