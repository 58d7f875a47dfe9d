"""/healthz and /readyz for load balancers, answered in plain ASGI before Django.

- /healthz (liveness): the process's event loop answers. No dependency is touched, so a
  Postgres or Redis outage never makes an orchestrator restart healthy web processes.
- /readyz (readiness): the database answers `SELECT 1` (its check is named after its vendor:
  `postgres`, or `sqlite` in embedded mode), Redis answers PING (in embedded mode the in-process
  stand-in, marked `embedded`), a Celery worker's
  heartbeat is fresh and beat's is too (getmcp/heartbeat.py). 200 when all pass, 503 otherwise,
  with each check in the JSON body. Every check has a deadline, so a hung service gives a 503
  in about READY_TIMEOUT_SECONDS rather than a hung probe.

Why before Django: the probes are cheap (no middleware, sessions or URL resolution), and they
skip ALLOWED_HOSTS, because load balancers probe by the instance's IP address, which is not a
host name the site serves. The answers hold only booleans and timings, nothing of any tenant.
"""

import asyncio
import time

import orjson

READY_TIMEOUT_SECONDS = 3.0
PATHS = ("/healthz", "/readyz")


def _database() -> None:
    from django.db import connection

    try:
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        # A probe thread's connection must not linger (or be reused after an outage).
        connection.close()


def _redis() -> None:
    from infra.redis import is_embedded, sync_client

    if not is_embedded():
        sync_client().ping()


def _background() -> dict:
    from . import heartbeat

    return heartbeat.status()


async def _timed(fn):
    started = time.monotonic()
    try:
        async with asyncio.timeout(READY_TIMEOUT_SECONDS):
            value = await asyncio.to_thread(fn)
        return True, value, None, started
    except TimeoutError:
        return False, None, "timed out", started
    except Exception as exc:
        return False, None, type(exc).__name__, started


def _check(ok: bool, error, started: float) -> dict:
    result = {"ok": ok, "ms": round((time.monotonic() - started) * 1000, 1)}
    if error:
        result["error"] = error
    return result


# The database check's name in the answer, by Django's vendor name (docs/operations.md).
DATABASE_NAMES = {"postgresql": "postgres", "sqlite": "sqlite"}


def database_name() -> str:
    from django.db import connection

    return DATABASE_NAMES.get(connection.vendor, connection.vendor)


async def readiness() -> dict:
    (pg, _, pg_error, pg_started), (rd, _, rd_error, rd_started), bg = await asyncio.gather(
        _timed(_database), _timed(_redis), _timed(_background)
    )
    bg_ok, status, bg_error, bg_started = bg
    status = status or {}
    from infra.redis import is_embedded

    checks = {
        database_name(): _check(pg, pg_error, pg_started),
        "redis": _check(rd, rd_error, rd_started),
        "worker": _check(bool(status.get("worker")), bg_error or None, bg_started),
        "beat": _check(bool(status.get("beat")), bg_error or None, bg_started),
    }
    if is_embedded():
        checks["redis"]["embedded"] = True  # fakeredis in this process, nothing to ping
    if bg_ok and not status.get("worker"):
        checks["worker"]["error"] = "no worker heartbeat"
    if bg_ok and not status.get("beat"):
        checks["beat"]["error"] = "beat heartbeat stale"
    ready = all(check["ok"] for check in checks.values())
    return {"status": "ok" if ready else "unavailable", "checks": checks}


async def _answer(send, status: int, body: dict) -> None:
    payload = orjson.dumps(body)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"cache-control", b"no-store"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class HealthApp:
    """Answers the two probe paths; passes everything else to `inner`."""

    def __init__(self, inner) -> None:
        self.inner = inner

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] not in PATHS:
            return await self.inner(scope, receive, send)
        if scope["method"] not in ("GET", "HEAD"):
            return await _answer(send, 405, {"status": "method not allowed"})
        if scope["path"] == "/healthz":
            return await _answer(send, 200, {"status": "ok"})
        body = await readiness()
        return await _answer(send, 200 if body["status"] == "ok" else 503, body)
