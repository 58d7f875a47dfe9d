"""Metrics across several worker processes (prometheus_client's multiprocess mode).

Each worker writes its values into memory-mapped files in PROMETHEUS_MULTIPROC_DIR; the worker
that answers a scrape sums every file. Rules the mode brings, kept here in one place:
- the variable must be set, and the directory exist and be empty, before the workers start
  (before any of them imports prometheus_client): `prepare()` does that in the parent process,
  called by scripts/run.py (uvicorn --workers) and getmcp/gunicorn_conf.py;
- a dead worker's live gauges (open streams) must be dropped: gunicorn's `child_exit` hook, or
  the worker's own exit (metrics.py);
- one process alone (uvicorn without --workers, `make run`) needs none of it.
"""

import os
import shutil
import tempfile

# prometheus_client is imported inside the functions only: it picks its value storage (files or
# memory) when first imported, so a parent that imported it before setting ENV would fork
# workers that count in memory.
ENV = "PROMETHEUS_MULTIPROC_DIR"


def directory() -> str | None:
    """The shared directory when this process counts in files, else None.

    Read from the environment, not from settings: prometheus_client itself reads the variable
    when first imported, and prepare() sets it at run time (after settings are loaded) for the
    workers a parent is about to fork. It is the library's process contract, not a setting."""
    return os.environ.get(ENV) or None


def prepare(workers: int) -> str | None:
    """Set up the directory for `workers` processes (none for one); returns it."""
    if workers <= 1 and not directory():
        return None
    path = directory() or tempfile.mkdtemp(prefix="getmcp-metrics-")
    # Values of an earlier run would be summed with this one's: start empty.
    if os.path.isdir(path):
        for name in os.listdir(path):
            if name.endswith(".db"):
                os.unlink(os.path.join(path, name))
    else:
        os.makedirs(path, exist_ok=True)
    os.environ[ENV] = path
    return path


def cleanup(path: str | None) -> None:
    if path and path.startswith(tempfile.gettempdir()) and "getmcp-metrics-" in path:
        shutil.rmtree(path, ignore_errors=True)
