"""Are the background processes alive? Celery workers and beat publish heartbeats in Redis.

With REDIS_URL set, tasks need a Celery worker and the upkeep schedule (keys' "last used", the
call log and analytics, task reaping) needs Celery beat. Neither answers a web process by
itself, so without these heartbeats a missing worker looks like a task that never finishes.

- Every worker's main process writes its name and the time into one sorted set every
  WORKER_INTERVAL seconds (a thread started on `worker_ready`) and removes itself on shutdown;
  a worker is alive while its entry is younger than WORKER_STALE seconds.
- Beat runs `BeatScheduler` (settings.CELERY_BEAT_SCHEDULER), which writes the time on its
  ticks, at most every BEAT_INTERVAL seconds; beat is alive while that is younger than BEAT_STALE.

- `make run`'s supervisor (scripts/run.py) restarts a worker or beat that exited; meanwhile it
  keeps a note in Redis, which `status()` returns so that the banner says so.

Embedded mode (no REDIS_URL) runs tasks and the schedule inside the web process: always alive.
"""

import json
import logging
import socket
import threading
import time

from celery import signals
from celery.beat import PersistentScheduler

from infra import keys

log = logging.getLogger(__name__)

WORKERS_KEY = keys.HEARTBEAT_WORKERS
BEAT_KEY = keys.HEARTBEAT_BEAT
RESTARTS_KEY = keys.SUPERVISOR_RESTARTS
WORKER_INTERVAL = 5.0
WORKER_STALE = 20.0
BEAT_INTERVAL = 10.0
# Beat ticks at least every 5 s (the call-log drain's interval); a minute covers a slow tick.
BEAT_STALE = 60.0


def _redis():
    from infra.redis import sync_client

    return sync_client()


def _embedded() -> bool:
    from infra.redis import is_embedded

    return is_embedded()


def worker_beat(name: str, now: float | None = None) -> None:
    now = time.time() if now is None else now
    pipe = _redis().pipeline(transaction=False)
    pipe.zadd(WORKERS_KEY, {name: now})
    # Workers that died without saying so leave entries behind; drop the long-dead ones.
    pipe.zremrangebyscore(WORKERS_KEY, "-inf", now - 10 * WORKER_STALE)
    pipe.execute()


def worker_gone(name: str) -> None:
    _redis().zrem(WORKERS_KEY, name)


def beat_tick(now: float | None = None) -> None:
    _redis().set(BEAT_KEY, repr(time.time() if now is None else now))


def workers_alive() -> bool:
    if _embedded():
        return True
    return bool(_redis().zcount(WORKERS_KEY, time.time() - WORKER_STALE, "+inf"))


def restart_notes(raw: dict) -> dict:
    """The supervisor's notes (scripts/run.py writes them while it restarts a process that
    exited): {"worker": {"code": -9, "exits": 1, "since": ..., "restart_at": ...}, ...}."""
    notes = {}
    for name, value in raw.items():
        try:
            note = json.loads(value)
        except ValueError:
            continue
        if isinstance(note, dict):
            notes[name.decode() if isinstance(name, bytes) else str(name)] = note
    return notes


def status() -> dict:
    """{"worker": bool, "beat": bool, "restarting": {name: note}} in one Redis round trip (the
    dashboard banner). `restarting` names what `make run` is restarting (restart_notes)."""
    if _embedded():
        return {"worker": True, "beat": True, "restarting": {}}
    now = time.time()
    pipe = _redis().pipeline(transaction=False)
    pipe.zcount(WORKERS_KEY, now - WORKER_STALE, "+inf")
    pipe.get(BEAT_KEY)
    pipe.hgetall(RESTARTS_KEY)
    workers, beat, restarts = pipe.execute()
    try:
        beat_fresh = beat is not None and now - float(beat) < BEAT_STALE
    except ValueError:
        beat_fresh = False
    return {"worker": bool(workers), "beat": beat_fresh, "restarting": restart_notes(restarts)}


# -- the worker side ------------------------------------------------------------------------------

_stop = threading.Event()


def _name(sender) -> str:
    return getattr(sender, "hostname", None) or f"celery@{socket.gethostname()}"


def _beat_forever(name: str) -> None:
    while not _stop.is_set():
        try:
            worker_beat(name)
        except Exception:  # Redis away: the next beat tries again; the worker keeps working
            log.warning("worker heartbeat: could not reach Redis", exc_info=True)
        _stop.wait(WORKER_INTERVAL)


@signals.worker_ready.connect
def _start_beating(sender=None, **kwargs) -> None:
    name = _name(sender)
    _stop.clear()
    # The first one now, before the worker logs "ready": a call right after that finds it alive.
    try:
        worker_beat(name)
    except Exception:
        log.warning("worker heartbeat: could not reach Redis", exc_info=True)
    threading.Thread(
        target=_beat_forever, args=(name,), name="getmcp-worker-heartbeat", daemon=True
    ).start()


@signals.worker_shutdown.connect
def _stop_beating(sender=None, **kwargs) -> None:
    _stop.set()
    try:
        worker_gone(_name(sender))
    except Exception:
        log.warning("worker heartbeat: could not remove this worker's entry", exc_info=True)


# -- the beat side --------------------------------------------------------------------------------


class BeatScheduler(PersistentScheduler):
    """Celery's default scheduler, plus a timestamp in Redis that says beat is running."""

    _last_written = 0.0

    def tick(self, *args, **kwargs):
        now = time.monotonic()
        if now - self._last_written >= BEAT_INTERVAL:
            try:
                beat_tick()
                self._last_written = now
            except Exception:
                log.warning("beat heartbeat: could not reach Redis", exc_info=True)
        return super().tick(*args, **kwargs)
