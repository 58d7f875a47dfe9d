"""Readiness during outages: a dead or hung Redis and a stopped Postgres each make /readyz a
503 naming the failed check, quickly; liveness stays 200 throughout."""

import time

import httpx2

from getmcp.health import READY_TIMEOUT_SECONDS


def _probe(server, path):
    started = time.monotonic()
    response = httpx2.get(f"{server.url}{path}", timeout=30)
    return response, time.monotonic() - started


def test_readiness_names_redis_when_it_is_down_and_liveness_stays_up(stack):
    healthy, _ = _probe(stack.server, "/readyz")
    assert healthy.json()["checks"]["redis"]["ok"] is True
    assert healthy.json()["checks"]["postgres"]["ok"] is True
    stack.redis.kill()
    response, _ = _probe(stack.server, "/readyz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["redis"]["ok"] is False and checks["postgres"]["ok"] is True
    assert _probe(stack.server, "/healthz")[0].status_code == 200


def test_readiness_answers_within_its_deadline_when_redis_hangs(stack):
    stack.redis.freeze()
    try:
        response, elapsed = _probe(stack.server, "/readyz")
    finally:
        stack.redis.thaw()
    assert response.status_code == 503
    assert response.json()["checks"]["redis"]["ok"] is False
    assert elapsed < READY_TIMEOUT_SECONDS + 3


def test_readiness_names_postgres_when_it_is_stopped(stack):
    stack.postgres.stop()
    try:
        response, _ = _probe(stack.server, "/readyz")
        live, _ = _probe(stack.server, "/healthz")
    finally:
        stack.postgres.start()
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["postgres"]["ok"] is False and checks["redis"]["ok"] is True
    assert live.status_code == 200
    back, _ = _probe(stack.server, "/readyz")
    assert back.json()["checks"]["postgres"]["ok"] is True
