"""Worker and beat heartbeats (getmcp/heartbeat.py): real Celery processes say they are alive,
and the dashboard shows a banner when one is not."""

import json
import os
import subprocess
import sys
import time

import pytest

from getmcp import heartbeat
from infra.redis import sync_client
from tests.celery_workers import ROOT, database_url_for_workers, running_workers, wait_until

WORKER_MISSING = "No task worker is running."
BEAT_MISSING = "Celery beat is not running."


@pytest.fixture
def quiet():
    """Nothing alive: no worker entries, no beat timestamp."""
    sync_client().delete(heartbeat.WORKERS_KEY, heartbeat.BEAT_KEY)
    yield
    sync_client().delete(heartbeat.WORKERS_KEY, heartbeat.BEAT_KEY)


@pytest.fixture
def member_client(client, user):
    client.force_login(user)
    return client


def test_the_dashboard_warns_when_neither_a_worker_nor_beat_is_alive(member_client, quiet):
    page = member_client.get("/calls/").content.decode()
    assert WORKER_MISSING in page and "are refused" in page
    assert BEAT_MISSING in page
    assert "last used" in page and "the call log and analytics" in page


def test_the_banner_is_gone_while_a_worker_and_beat_are_alive(member_client, quiet):
    heartbeat.worker_beat("celery@banner-test")
    heartbeat.beat_tick()
    page = member_client.get("/calls/").content.decode()
    assert "data-background-banner" not in page


def test_the_banner_names_only_what_is_missing(member_client, quiet):
    heartbeat.worker_beat("celery@banner-test")
    heartbeat.beat_tick(now=time.time() - heartbeat.BEAT_STALE - 1)
    page = member_client.get("/calls/").content.decode()
    assert BEAT_MISSING in page and WORKER_MISSING not in page


def test_embedded_mode_needs_no_worker_or_beat_and_shows_no_banner(member_client, quiet, settings):
    settings.REDIS_URL = ""
    assert heartbeat.status() == {"worker": True, "beat": True, "restarting": {}}
    assert heartbeat.workers_alive()
    assert "data-background-banner" not in member_client.get("/calls/").content.decode()


def test_sign_in_pages_do_not_ask_about_the_background(client, quiet):
    assert "data-background-banner" not in client.get("/login/").content.decode()


def test_a_real_worker_says_it_is_alive_and_takes_it_back_when_it_stops(
    live_database, tmp_path, quiet
):
    assert heartbeat.status()["worker"] is False
    with running_workers(tmp_path) as start:
        worker = start()
        assert heartbeat.status()["worker"] is True
        names = [name.decode() for name in sync_client().zrange(heartbeat.WORKERS_KEY, 0, -1)]
        assert names == [f"{worker.name}@{os.uname().nodename}"]
        worker.stop()
    assert heartbeat.status()["worker"] is False


def test_a_real_beat_process_says_it_is_alive(live_database, tmp_path, quiet):
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for_workers(),
        "DJANGO_SETTINGS_MODULE": "getmcp.settings",
    }
    env.pop("TEST_DB_NAME", None)
    log = tmp_path / "beat.log"
    with open(log, "wb") as out:
        beat = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "getmcp.celery", "beat", "--loglevel=INFO"]
            + [f"--schedule={tmp_path / 'schedule'}"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(lambda: heartbeat.status()["beat"], timeout=30, what="beat's heartbeat")
    finally:
        beat.terminate()
        beat.wait(10)
        # What beat sent must not be run by a later test's worker.
        from getmcp.celery import app

        app.control.purge()
    assert "getmcp.heartbeat.BeatScheduler" in log.read_text()


def test_the_banner_says_when_make_run_is_restarting_the_worker_or_beat(member_client, quiet):
    heartbeat.worker_beat("celery@banner-test")  # a crashed worker's entry is still fresh
    heartbeat.beat_tick()
    notes = {"worker": {"code": -9, "exits": 2, "since": time.time(), "restart_at": time.time()}}
    sync_client().hset(heartbeat.RESTARTS_KEY, "worker", json.dumps(notes["worker"]))
    try:
        assert heartbeat.status()["restarting"] == notes
        page = member_client.get("/calls/").content.decode()
        assert "The task worker stopped and is being restarted." in page
        assert "It exited with code -9 (2 times" in page
        assert BEAT_MISSING not in page and WORKER_MISSING not in page
        sync_client().hset(heartbeat.RESTARTS_KEY, "worker", "not json")
        assert heartbeat.status()["restarting"] == {}
    finally:
        sync_client().delete(heartbeat.RESTARTS_KEY)
