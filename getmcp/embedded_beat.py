"""Embedded mode (no REDIS_URL) has no Celery beat process: the web process runs the beat
schedule itself on a background thread, so key usage, call-log upkeep, task reaping and
upstream refreshes happen there too."""

import logging
import threading
import time
from typing import cast

from django.conf import settings
from django.db import close_old_connections

log = logging.getLogger(__name__)
_started = threading.Event()
_loaded = threading.Event()


def start() -> bool:
    """Start the thread once per process, and only in embedded mode."""
    from infra.redis import is_embedded

    if not is_embedded() or _started.is_set():
        return False
    _started.set()
    threading.Thread(target=_run_forever, name="embedded-beat", daemon=True).start()
    return True


def _app():
    from getmcp.celery import app

    if not _loaded.is_set():
        app.loader.import_default_modules()
        _loaded.set()
    return app


def run_due(last: dict, now: float) -> list[str]:
    """Run every schedule entry whose interval has passed; returns the names that ran."""
    app = _app()
    ran = []
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        if now - last.get(name, float("-inf")) < float(cast(float, entry["schedule"])):
            continue
        last[name] = now
        try:
            # Called directly rather than through apply(): same work, without a worker's
            # per-run trace line every few seconds.
            app.tasks[entry["task"]]()
            ran.append(name)
        except Exception:
            log.exception("embedded beat: %s failed", name)
    return ran


def _run_forever() -> None:
    last: dict = {}
    while True:
        close_old_connections()
        run_due(last, time.monotonic())
        time.sleep(1.0)
